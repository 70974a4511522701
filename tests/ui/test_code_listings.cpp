// SPDX-License-Identifier: GPL-3.0-or-later
// The code panel's listings: the highlight sequence of a window (by hand, from
// the engine, with mixed precision, across ranks), every role tagged, the
// listings equal to the sources, and the lines lit at teaching pace.

#include <QDir>
#include <QTabWidget>
#include <QAction>
#include <QFile>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <cmath>
#include <memory>
#include <qcustomplot.h>

#include <QLabel>

#include "isolated_settings.h"
#include "accum/run_config.h"
#include "accum/session.h"
#include "accum/sink.h"
#include "accumulation_meter.h"
#include "code_listing.h"
#include "code_panel.h"
#include "config_panel.h"
#include "experiments.h"
#include "lab_panel.h"
#include "lit_order.h"
#include "lesson.h"
#include "link_curve.h"
#include "loss_plot.h"
#include "main_window.h"
#include "memory_plot.h"
#include "run_result.h"
#include "runs_panel.h"
#include "runs_folder.h"
#include "tiny_config.h"

using studio::LineRole;

using test_fixtures::tiny_config;

namespace {

struct MicroSink : accum::Sink {
    std::vector<accum::MicroStepRecord> micro;
    void on_micro_step(const accum::MicroStepRecord& r) override { micro.push_back(r); }
};

} // namespace

class TestCodeListings : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void highlightSequenceK3Over6();
    void highlightSequenceWithMixedPrecision();
    void highlightSequenceFromTheEngine();
    void listingsTagEveryRole_data();
    void listingsTagEveryRole();
    void listingsAreTheSources_data();
    void listingsAreTheSources();
    void codePanelLightsLinesAtTeachingPace();
    void dataParallelHighlightAndListings();

private:
    QTemporaryDir settings_dir_;
};

void TestCodeListings::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
    // These tests count the runs of one window: no run saved, none listed from another.
    studio::set_configured_runs_folder({false, studio::default_runs_folder()});
}

void TestCodeListings::highlightSequenceK3Over6() {
    // K = 3 over 6 micro-batches: windows (1,2,3) and (4,5,6); the 3rd and 6th sync.
    std::vector<accum::MicroStepRecord> records;
    for (int i = 1; i <= 6; ++i) {
        accum::MicroStepRecord r;
        r.micro_step = i;
        r.step = (i - 1) / 3;
        r.window_index = (i - 1) % 3 + 1;
        r.window_size = 3;
        r.sync = r.window_index == 3;
        records.push_back(r);
    }
    const std::vector<LineRole> micro = {LineRole::Forward, LineRole::LossScale, LineRole::Backward};
    const std::vector<LineRole> update = {LineRole::Forward,       LineRole::LossScale,     LineRole::Backward,
                                          LineRole::OptimizerStep, LineRole::SchedulerStep, LineRole::ZeroGrad};
    const std::vector<std::vector<LineRole>> expected = {micro, micro, update, micro, micro, update};
    QVERIFY(studio::highlight_sequence(records) == expected);
}

void TestCodeListings::highlightSequenceWithMixedPrecision() {
    // bf16 with a loss scaler, K = 2: autocast lights before every forward, the
    // scaler's unscale_ and update() only on the sync micro-batch.
    std::vector<accum::MicroStepRecord> records(2);
    for (int i = 0; i < 2; ++i) {
        records[i].micro_step = i + 1;
        records[i].window_index = i + 1;
        records[i].window_size = 2;
        records[i].sync = i == 1;
        records[i].autocast = true;
        records[i].loss_scale = 65536.0;
    }
    const std::vector<LineRole> micro = {LineRole::Autocast, LineRole::Forward, LineRole::LossScale, LineRole::Backward};
    const std::vector<LineRole> update = {LineRole::Autocast,      LineRole::Forward,       LineRole::LossScale,
                                          LineRole::Backward,      LineRole::Unscale,       LineRole::OptimizerStep,
                                          LineRole::ScalerUpdate,  LineRole::SchedulerStep, LineRole::ZeroGrad};
    QVERIFY(studio::highlight_sequence(records) == (std::vector<std::vector<LineRole>>{micro, update}));
    // Scaling without autocast (the CPU teaching case): the scaler's lines, no autocast.
    records[1].autocast = false;
    const auto roles = studio::highlight_roles(records[1]);
    QCOMPARE(roles.front(), LineRole::Forward);
    QVERIFY(std::find(roles.begin(), roles.end(), LineRole::Unscale) != roles.end());
    // From the engine: bf16 and --loss-scaling dynamic, 1 optimizer step × K = 3, in the Trainer.
    auto c = tiny_config(8, 3, 1);
    c.mode = accum::Mode::Trainer;
    c.mixed_precision = accum::MixedPrecision::Bf16;
    c.loss_scaling = accum::LossScaling::Dynamic;
    c.record_micro_steps = true;
    c.quiet = true;
    accum::Session session;
    MicroSink sink;
    QCOMPARE(int(session.run(c, sink).status), int(accum::RunStatus::Completed));
    QCOMPARE(int(sink.micro.size()), 3);
    const auto sequence = studio::highlight_sequence(sink.micro);
    QCOMPARE(sequence[0], micro);
    QCOMPARE(sequence[2], update);
}

void TestCodeListings::highlightSequenceFromTheEngine() {
    // The same from a real run: 2 optimizer steps × K = 3 = 6 micro-batches.
    auto c = tiny_config(8, 3, 2);
    c.record_micro_steps = true;
    c.quiet = true;
    accum::Session session;
    MicroSink sink;
    const auto summary = session.run(c, sink);
    QCOMPARE(int(summary.status), int(accum::RunStatus::Completed));
    QCOMPARE(int(sink.micro.size()), 6);
    const auto sequence = studio::highlight_sequence(sink.micro);
    int steps = 0;
    for (int i = 0; i < 6; ++i) {
        const auto& roles = sequence[static_cast<std::size_t>(i)];
        QCOMPARE(roles[0], LineRole::Forward);
        QCOMPARE(roles[2], LineRole::Backward);
        const bool steps_here = roles.size() == 6 && roles[3] == LineRole::OptimizerStep;
        QCOMPARE(steps_here, i == 2 || i == 5);
        steps += steps_here;
    }
    QCOMPARE(steps, 2);
}

void TestCodeListings::listingsTagEveryRole_data() {
    QTest::addColumn<QString>("style");
    QTest::addColumn<QString>("language");
    for (const char* style : {"pytorch", "accelerator", "trainer"})
        for (const char* language : {"cpp", "py"})
            QTest::newRow(qPrintable(QStringLiteral("%1.%2").arg(style, language)))
                << QString::fromLatin1(style) << QString::fromLatin1(language);
}

void TestCodeListings::listingsTagEveryRole() {
    QFETCH(QString, style);
    QFETCH(QString, language);
    const auto listing = studio::load_listing(style, language);
    QVERIFY(listing.lines.size() > 8);
    for (auto role : {LineRole::Autocast, LineRole::Forward, LineRole::LossScale, LineRole::Backward,
                      LineRole::Unscale, LineRole::OptimizerStep, LineRole::SchedulerStep, LineRole::ScalerUpdate,
                      LineRole::ZeroGrad}) {
        QVERIFY2(!listing.lines_for(role).isEmpty(), qPrintable(studio::role_name(role)));
        for (int line : listing.lines_for(role)) QVERIFY(!listing.lines[line].startsWith(QLatin1Char('[')));
    }
    // A scaled window's last micro-batch, lit role by role: the line never jumps back up.
    const auto problem = test_lit::order_problem(listing, studio::highlight_roles(test_lit::scaled_sync_record()));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

// The code panel's C++ tab is the marked region of each style's own source, and
// its Python tab that of a script that runs with the real library: line for line against
// the files as they are now on disk (a source edited without the panel following
// fails here), and the lines a learner is told about are there.
void TestCodeListings::listingsAreTheSources_data() {
    QTest::addColumn<QString>("style");
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("must_read");
    QTest::newRow("pytorch.cpp") << "pytorch" << "cpp" << "engine/src/styles/pytorch_loop.cpp"
                                 << QStringList{"model.train();", "model.no_sync()",
                                                "AutocastScope autocast(device.type(), precision);",
                                                "outputs = model(batch);", "scaler.scale(loss).backward();",
                                                "scaler.unscale_(optimizer);",
                                                "clip_grad_norm_(model.parameters(), max_grad_norm)",
                                                "stepped = scaler.step(optimizer);", "if (stepped) lr_scheduler.step();",
                                                "scaler.update();", "optimizer.zero_grad();"};
    QTest::newRow("accelerator.cpp")
        << "accelerator" << "cpp" << "engine/src/styles/accelerator.cpp"
        << QStringList{"Accelerator accelerator(", "/*mixed_precision=*/precision", "accelerator.prepare(",
                       "accelerator.accumulate(model)", "accelerator.backward(loss);", "if (accelerator.sync_gradients())",
                       "accelerator.clip_grad_norm_(model.parameters(), max_grad_norm);", "optimizer.zero_grad();"};
    QTest::newRow("trainer.cpp") << "trainer" << "cpp" << "engine/src/styles/trainer.cpp"
                                 << QStringList{"args_.gradient_accumulation_steps", "args_.max_grad_norm",
                                                "model.no_sync()",
                                                "AutocastScope autocast(device.type(), precision);",
                                                "scaler.scale(loss).backward();", "scaler.unscale_(optimizer);",
                                                "optimizer_was_run = scaler.step(optimizer);", "scaler.update();",
                                                "if (optimizer_was_run) lr_scheduler.step();", "model.zero_grad();"};
    QTest::newRow("pytorch.py") << "pytorch" << "py" << "resources/code/pytorch_loop.py"
                                << QStringList{"DistributedDataParallel(model)", "model.no_sync()",
                                               "with torch.autocast(", "outputs = model(inputs, labels=targets)",
                                               "loss = outputs.loss / K", "scaler.scale(loss).backward()",
                                               "scaler.unscale_(optimizer)", "scaler.step(optimizer)",
                                               "scaler.update()", "optimizer.zero_grad()"};
    QTest::newRow("accelerator.py") << "accelerator" << "py" << "resources/code/accelerator.py"
                                    << QStringList{"Accelerator(gradient_accumulation_steps=", "accelerator.prepare(",
                                                   "with accelerator.accumulate(model):", "accelerator.backward(loss)",
                                                   "accelerator.clip_grad_norm_(", "optimizer.step()",
                                                   "lr_scheduler.step()", "optimizer.zero_grad()"};
    QTest::newRow("trainer.py") << "trainer" << "py" << "resources/code/trainer.py"
                                << QStringList{"TrainingArguments(", "gradient_accumulation_steps=",
                                               "trainer.train(resume_from_checkpoint=",
                                               "accelerator.no_sync", "outputs = model(**inputs)",
                                               "accelerator.backward(loss)", "lr_scheduler.step()",
                                               "model.zero_grad()"};
}

void TestCodeListings::listingsAreTheSources() {
    QFETCH(QString, style);
    QFETCH(QString, language);
    QFETCH(QString, file);
    QFETCH(QStringList, must_read);
    QFile source(QStringLiteral(ACCUM_SOURCE_DIR "/") + file);
    QVERIFY2(source.open(QIODevice::ReadOnly | QIODevice::Text), qPrintable(source.fileName()));
    const auto on_disk = studio::listing_from_source(QString::fromUtf8(source.readAll()),
                                                     language == "cpp" ? QStringLiteral("//") : QStringLiteral("#"));
    const auto shown = studio::load_listing(style, language);
    QVERIFY(on_disk.lines.size() > 10);
    QCOMPARE(shown.lines.size(), on_disk.lines.size() + 1); // the panel's first line names the file
    QVERIFY(shown.lines.front().contains(file));
    for (qsizetype i = 0; i < on_disk.lines.size(); ++i) QCOMPARE(shown.lines[i + 1], on_disk.lines[i]);
    for (const auto& text : must_read)
        QVERIFY2(std::any_of(shown.lines.begin(), shown.lines.end(), [&](const QString& l) { return l.contains(text); }),
                 qPrintable(text));
    for (const auto& line : shown.lines) QVERIFY2(!line.contains(QStringLiteral("@")), qPrintable(line)); // no tags
    // The Accelerator clips inside `if (accelerator.sync_gradients())` (in Python
    // `if accelerator.sync_gradients`), as Accelerate users write it.
    if (style == "accelerator") {
        const auto at = std::find_if(shown.lines.begin(), shown.lines.end(), [](const QString& l) {
            return l.contains(QStringLiteral("accelerator.clip_grad_norm_"));
        });
        const auto condition = language == "cpp" ? QStringLiteral("if (accelerator.sync_gradients())")
                                                 : QStringLiteral("if accelerator.sync_gradients");
        QVERIFY(at != shown.lines.begin() && (at - 1)->contains(condition));
    }
}

void TestCodeListings::codePanelLightsLinesAtTeachingPace() {
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto c = tiny_config(8, 3, 3);
    c.micro_step_delay_s = 0.15;
    window.config_panel()->set_config(c);
    QSignalSpy finished(&window, &studio::MainWindow::run_finished);
    auto* panel = window.code_panel();
    window.run_action()->trigger();
    // Some time during the run a forward line and, at a sync, the step line light
    // up: the panel's history holds every line it lit. What it shows while a
    // line is lit is looked at as the run goes.
    bool unhighlighted = false;
    QTimer look;
    connect(&look, &QTimer::timeout, this, [&] {
        if (!panel->lit_roles().empty() && panel->highlighted_lines(QStringLiteral("py")).isEmpty()) unhighlighted = true;
    });
    look.start(20);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 20000);
    look.stop();
    QVERIFY2(!unhighlighted, "a line was lit with no Python line highlighted");
    bool saw_forward = false, saw_step = false;
    for (const auto& lit : panel->lit_history()) {
        saw_forward = saw_forward || lit.role == LineRole::Forward;
        saw_step = saw_step || lit.role == LineRole::OptimizerStep;
    }
    QVERIFY(saw_forward);
    QVERIFY(saw_step);
    QVERIFY(panel->meter()->window_size() == 3);
}

// Several processes: a micro-batch without an all-reduce enters no_sync()
// first, the window's last has the all-reduce after its backward; every listing
// (both languages, three styles) tags those lines. One process lights neither.
void TestCodeListings::dataParallelHighlightAndListings() {
    accum::MicroStepRecord local;
    local.window_index = 1;
    local.window_size = 4;
    accum::MicroStepRecord last = local;
    last.window_index = 4;
    last.sync = true;
    last.grad_allreduces = 1;
    const std::vector<LineRole> no_sync = {LineRole::NoSync, LineRole::Forward, LineRole::LossScale, LineRole::Backward};
    const std::vector<LineRole> sync = {LineRole::Forward,       LineRole::LossScale,     LineRole::Backward,
                                        LineRole::AllReduce,     LineRole::OptimizerStep, LineRole::SchedulerStep,
                                        LineRole::ZeroGrad};
    QVERIFY(studio::highlight_roles(local, 2) == no_sync);
    QVERIFY(studio::highlight_roles(last, 2) == sync);
    QCOMPARE(int(studio::highlight_roles(local, 1).size()), 3);
    QCOMPARE(int(studio::highlight_roles(last, 1).size()), 6);
    for (const char* style : {"pytorch", "accelerator", "trainer"})
        for (const char* language : {"cpp", "py"}) {
            const auto listing = studio::load_listing(style, language);
            for (const auto role : {LineRole::NoSync, LineRole::AllReduce})
                QVERIFY2(!listing.lines_for(role).isEmpty(),
                         qPrintable(QStringLiteral("%1.%2: %3").arg(style, language, studio::role_name(role))));
            // The all-reduce is the backward's: DDP averages the gradients when backward has run.
            QCOMPARE(listing.lines_for(LineRole::AllReduce), listing.lines_for(LineRole::Backward));
            const auto no_sync_line = listing.lines[listing.lines_for(LineRole::NoSync).front()];
            QVERIFY2(no_sync_line.contains(QStringLiteral("no_sync")) || no_sync_line.contains(QStringLiteral("accumulate")),
                     qPrintable(no_sync_line));
        }
    const auto plan = studio::plan_experiment(studio::Experiment::NoSyncVsSyncEach, tiny_config(16, 4, 12));
    QCOMPARE(int(plan.size()), 2);
    for (const auto& p : plan) {
        QCOMPARE(p.config.nproc_per_node, 2);
        QVERIFY2(accum::validate(p.config).empty(), qPrintable(p.label));
    }
    QVERIFY(!plan[0].config.sync_each_micro_batch && plan[1].config.sync_each_micro_batch);
}

QTEST_MAIN(TestCodeListings)
#include "test_code_listings.moc"
