// The equivalence lab, the runs list with a run directory written by
// accum-run, and the translation (the code panel's listings and highlight
// sequence: test_code_listings.cpp).
// Tiny seeded runs: synthetic-pairs + mlp, a dozen optimizer steps.

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
#include "lab_stats.h"
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

class TestTeachingLab : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void compareStylesSameTrajectory();
    void compareAccumulationLessMemory();
    void pitfallPlans();
    void everyExperimentPlansRuns();
    void experimentsAreOneTable();
    void noSyncDemoInTheLab();
    void liveRunWithTwoProcesses();
    void lossPlotShowsTheScale();
    void memoryLeversDemo();
    void runDirectoryReproducesCurves();
    void vietnameseTranslationLoads();
    void speedsLeaveOutTheWarmUp();

private:
    QTemporaryDir settings_dir_;
};

void TestTeachingLab::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
    // These tests count the runs of one window: no run saved, none listed from another.
    studio::set_configured_runs_folder({false, studio::default_runs_folder()});
}

void TestTeachingLab::compareStylesSameTrajectory() {
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.config_panel()->set_config(tiny_config(16, 4, 12));
    QSignalSpy done(&window, &studio::MainWindow::experiment_finished);
    QVERIFY(window.run_demo(QStringLiteral("compare-styles")));
    QVERIFY(done.wait(60000));
    const auto& runs = window.lab_panel()->results();
    QCOMPARE(int(runs.size()), 3);
    for (const auto& r : runs) {
        QCOMPARE(int(r.summary.status), int(accum::RunStatus::Completed));
        QCOMPARE(int(r.steps.size()), 12);
    }
    QCOMPARE(runs[0].config.mode, accum::Mode::Pytorch);
    QCOMPARE(runs[1].config.mode, accum::Mode::Accelerator);
    QCOMPARE(runs[2].config.mode, accum::Mode::Trainer);
    // ARCHITECTURE.md I7: the three styles give the same trajectory when L % K == 0.
    const double worst = window.lab_panel()->max_loss_difference();
    QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
    QCOMPARE(window.lab_panel()->table()->rowCount(), 3);
    QVERIFY(window.lab_panel()->table()->item(2, 3)->text().toDouble() < 1e-5);
    QCOMPARE(window.runs_panel()->run_count(), 3); // every lab run is listed
}

void TestTeachingLab::compareAccumulationLessMemory() {
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.config_panel()->set_config(tiny_config(32, 2, 10));
    QSignalSpy done(&window, &studio::MainWindow::experiment_finished);
    QVERIFY(window.run_demo(QStringLiteral("compare-accumulation")));
    QVERIFY(done.wait(60000));
    const auto& runs = window.lab_panel()->results();
    QCOMPARE(int(runs.size()), 3); // (64, 1), (32, 2), (16, 4)
    QCOMPARE(runs[0].config.batch_size, 64);
    QCOMPARE(runs[2].config.batch_size, 16);
    QCOMPARE(runs[2].config.accumulation_steps, 4);
    for (const auto& r : runs) QCOMPARE(int(r.summary.status), int(accum::RunStatus::Completed));
    qInfo("peak memory %lld / %lld / %lld bytes", (long long)runs[0].summary.peak_memory_bytes,
          (long long)runs[1].summary.peak_memory_bytes, (long long)runs[2].summary.peak_memory_bytes);
    // ARCHITECTURE.md I9: memory is set by the micro-batch.
    QVERIFY(runs[1].summary.peak_memory_bytes < runs[0].summary.peak_memory_bytes);
    QVERIFY(runs[2].summary.peak_memory_bytes < runs[1].summary.peak_memory_bytes);
    // ARCHITECTURE.md I1: same effective batch, same curve (float rounding only).
    QVERIFY(window.lab_panel()->max_loss_difference() < 1e-4);
}

// Every experiment's plan, from the table of experiments: at least two runs (the
// lab measures each against the first), each with a label of its own for the
// legend and the table, and a configuration the engine accepts, the lab's way
// (short, quiet, writing nothing, no budget). From a plain configuration and
// from one a teacher may have left in the form: evaluating and saving every 10
// steps under a budget (plans used to fail at once from it: the lab turned
// --eval-strategy steps into epoch and left --eval-steps 10).
void TestTeachingLab::everyExperimentPlansRuns() {
    auto busy = tiny_config(16, 4, 12);
    busy.eval_strategy = accum::Strategy::Steps;
    busy.eval_steps = 10;
    busy.save_strategy = accum::Strategy::Steps;
    busy.save_steps = 10;
    busy.memory_budget = "26MiB";
    busy.gradient_checkpointing = true;
    QVERIFY(accum::validate(busy).empty());
    QVERIFY(!studio::experiments().empty());
    for (const auto& base : {tiny_config(16, 4, 12), busy})
        for (const auto& info : studio::experiments()) {
            const auto plan = studio::plan_experiment(info.experiment, base);
            QVERIFY2(plan.size() >= 2, qPrintable(QStringLiteral("%1: %2 runs").arg(info.id).arg(plan.size())));
            QStringList labels;
            for (const auto& run : plan) {
                const auto where = QStringLiteral("%1, %2").arg(QLatin1String(info.id), run.label);
                QVERIFY2(!run.label.isEmpty() && !labels.contains(run.label), qPrintable(where));
                labels << run.label;
                const auto problems = accum::validate(run.config);
                QVERIFY2(problems.empty(), qPrintable(where + QStringLiteral(": ") +
                                                      (problems.empty() ? QString()
                                                                        : QString::fromStdString(problems.front().to_string()))));
                QVERIFY2(run.config.max_steps > 0 && run.config.epochs == 0, qPrintable(where));
                QVERIFY2(run.config.quiet && run.config.output_dir.empty() && run.config.metrics_file.empty() &&
                             run.config.resume_from.empty(),
                         qPrintable(where));
                QVERIFY2(run.config.memory_budget == "0" && run.config.micro_step_delay_s == 0.0, qPrintable(where));
            }
        }
}

// The experiments are one table: --demo's names, the lab's buttons and the Lab
// menu's entries all come from it, each experiment once.
void TestTeachingLab::experimentsAreOneTable() {
    QStringList ids;
    QList<int> values;
    for (const auto& info : studio::experiments()) {
        const QString id = QLatin1String(info.id);
        QVERIFY2(!ids.contains(id), info.id);
        QVERIFY2(!values.contains(int(info.experiment)), info.id);
        ids << id;
        values << int(info.experiment);
        QCOMPARE(studio::find_experiment(id), &info);
        QCOMPARE(&studio::experiment_info(info.experiment), &info);
        for (const auto& text : {info.title_text(), info.menu_title_text(), info.tooltip_text(), info.explanation_text()})
            QVERIFY2(!text.isEmpty(), info.id);
    }
    QVERIFY(!studio::find_experiment(QStringLiteral("code-panel")));
    QCOMPARE(studio::MainWindow::demo_names(), QStringList{QStringLiteral("code-panel")} + ids);
    // Every step of the lesson runs an experiment of the table.
    for (const auto& step : studio::lesson_steps())
        if (step.run == studio::LessonRun::Experiment) QVERIFY2(values.contains(int(step.experiment)), step.key);

    studio::MainWindow window;
    int buttons = 0;
    for (auto* b : window.lab_panel()->findChildren<QPushButton*>())
        if (b != window.lab_panel()->findChild<QPushButton*>(QStringLiteral("lab_cancel"))) ++buttons;
    QCOMPARE(buttons, int(ids.size()));
    for (const auto& info : studio::experiments()) {
        auto* button = window.lab_panel()->button(info.experiment);
        QVERIFY2(button, info.id);
        QCOMPARE(button->objectName(), info.object_name());
        QCOMPARE(button->text(), info.title_text());
        auto* action = window.findChild<QAction*>(info.object_name() + QStringLiteral("_action"));
        QVERIFY2(action, info.id);
        QCOMPARE(action->text(), info.menu_title_text());
    }
}

void TestTeachingLab::pitfallPlans() {
    const auto base = tiny_config(16, 4, 12);
    const auto bn = studio::plan_experiment(studio::Experiment::PitfallBatchNorm, base);
    QCOMPARE(int(bn.size()), 2);
    QVERIFY(bn[0].config.batch_norm && bn[1].config.batch_norm);
    QCOMPARE(bn[0].config.effective_batch(), bn[1].config.effective_batch());
    const auto tokens = studio::plan_experiment(studio::Experiment::PitfallTokenLoss, base);
    QCOMPARE(int(tokens.size()), 3);
    QCOMPARE(tokens[1].config.loss_normalization, accum::LossNormalization::Mean);
    QCOMPARE(tokens[2].config.loss_normalization, accum::LossNormalization::Tokens);
    QCOMPARE(tokens[2].config.model, accum::ModelKind::Transformer);
    const auto sched = studio::plan_experiment(studio::Experiment::PitfallScheduler, base);
    QCOMPARE(int(sched.size()), 2);
    QVERIFY(!sched[0].config.scheduler_per_micro_batch && sched[1].config.scheduler_per_micro_batch);
    // The loss scaler per micro-batch: the plain loop on Fashion-MNIST (gradients above 1
    // exist there), a dynamic scaler from float32's largest scale, the wrong run unscaling
    // and updating per micro-batch, K > 1 whatever the base.
    auto k1 = base;
    k1.accumulation_steps = 1;
    k1.mode = accum::Mode::Trainer;
    k1.model = accum::ModelKind::Transformer;
    const auto scaler = studio::plan_experiment(studio::Experiment::PitfallLossScale, k1);
    QCOMPARE(int(scaler.size()), 2);
    for (const auto& p : scaler) {
        QCOMPARE(p.config.mode, accum::Mode::Pytorch);
        QCOMPARE(p.config.dataset, accum::DatasetKind::FashionMnist);
        QCOMPARE(p.config.model, accum::ModelKind::Mlp);
        QVERIFY(p.config.uses_loss_scaler());
        QCOMPARE(p.config.loss_scale_init, studio::kOverflowLossScale);
        QVERIFY(p.config.accumulation_steps > 1);
    }
    QVERIFY(!scaler[0].config.scaler_per_micro_batch && scaler[1].config.scaler_per_micro_batch);
    for (const auto& plans : {bn, tokens, sched, scaler})
        for (const auto& p : plans) QVERIFY2(accum::validate(p.config).empty(), qPrintable(p.label));
}

// The Equivalence lab's "no_sync vs sync every micro-batch" with two processes:
// the same losses, one all-reduce per update against K, and both times per update.
void TestTeachingLab::noSyncDemoInTheLab() {
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.config_panel()->set_config(tiny_config(16, 4, 10));
    QSignalSpy done(&window, &studio::MainWindow::experiment_finished);
    QVERIFY(window.run_demo(QStringLiteral("no-sync")));
    QVERIFY(done.wait(120000));
    const auto& runs = window.lab_panel()->results();
    QCOMPARE(int(runs.size()), 2);
    for (const auto& r : runs) {
        QVERIFY2(r.summary.status == accum::RunStatus::Completed, r.summary.message.c_str());
        QCOMPARE(r.summary.world_size, 2);
        QCOMPARE(int(r.steps.size()), 10);
    }
    QCOMPARE(studio::allreduces_per_update(runs[0]), 1.0);
    QCOMPARE(studio::allreduces_per_update(runs[1]), 4.0);
    // ARCHITECTURE.md I15: syncing every micro-batch averages the same sums.
    QVERIFY(window.lab_panel()->max_loss_difference() < 1e-5);
    auto* table = window.lab_panel()->table();
    QCOMPARE(table->rowCount(), 2);
    QVERIFY(!table->isColumnHidden(8) && !table->isColumnHidden(9));
    QCOMPARE(table->item(0, 8)->text(), QStringLiteral("1"));
    QCOMPARE(table->item(1, 8)->text(), QStringLiteral("4"));
    QVERIFY(table->item(0, 1)->text().contains(QStringLiteral("× 2 =")));
    QVERIFY(window.lab_panel()->verdict_label()->text().contains(QStringLiteral("ms")));
    // In presentation mode the memory columns (peak memory 6, peak activations 10)
    // step aside for the communication ones; at the desk all are shown.
    QVERIFY(!table->isColumnHidden(6) && !table->isColumnHidden(10));
    window.lab_panel()->set_presentation_scale(1.5);
    QVERIFY(table->isColumnHidden(6) && table->isColumnHidden(10));
    QVERIFY(!table->isColumnHidden(8) && !table->isColumnHidden(9));
    window.lab_panel()->set_presentation_scale(1.0);
    QVERIFY(!table->isColumnHidden(6) && !table->isColumnHidden(10));
    // Beside it, what the benchmark measured on two hosts (bench/two_hosts_bench.py's
    // resources/lab/two_hosts_speedup.json, compiled in): per model the engine's and
    // eager DDP's no_sync ÷ sync-each against the link's rate.
    const auto measured = studio::measured_link_curve();
    QVERIFY2(measured, "no measured curve compiled in (:/lab/two_hosts_speedup.json)");
    auto* curve = window.lab_panel()->link_curve();
    QVERIFY(curve && curve->isVisible());
    QCOMPARE(curve->graphCount(), 2 * int(measured->series.size()));
    for (const auto& series : measured->series) {
        QVERIFY(series.points.size() >= 2);
        for (const auto& p : series.points) QVERIFY(std::isfinite(p.engine) && p.engine > 0);
    }
    // The lesson's no_sync step says it with those figures; nothing is made up from a bad file.
    const auto& step = studio::lesson_steps()[static_cast<std::size_t>(studio::lesson_step_index("no_sync"))];
    QVERIFY(!studio::link_curve_sentence(*measured).isEmpty());
    QVERIFY(step.body_text().contains(studio::link_curve_sentence(*measured)));
    QVERIFY(!studio::parse_link_curve("{}"));
    QVERIFY(!studio::parse_link_curve(R"({"models": {"cnn": [{"engine": -1}]}})"));
    QVERIFY(!studio::parse_link_curve("not json"));
}

// A live run of two processes from the configuration panel: the code panel lights
// no_sync and the all-reduce and counts the update's all-reduces, the memory plot
// has a line for rank 1, and the run ends with both ranks' samples.
void TestTeachingLab::liveRunWithTwoProcesses() {
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto c = tiny_config(8, 3, 4);
    c.nproc_per_node = 2;
    c.micro_step_delay_s = 0.15;
    window.config_panel()->set_config(c);
    QVERIFY(window.config_panel()->is_valid());
    QVERIFY(window.config_panel()->summary_text().contains(QStringLiteral("2 processes")));
    QSignalSpy finished(&window, &studio::MainWindow::run_finished);
    auto* panel = window.code_panel();
    window.run_action()->trigger();
    // Every line lit is in the panel's history; the counter beside a lit
    // all-reduce is looked at as the run goes.
    QString counter_beside_all_reduce;
    QTimer look;
    connect(&look, &QTimer::timeout, this, [&] {
        const auto lit = panel->lit_roles();
        const auto text = panel->allreduce_counter()->text();
        if (!lit.empty() && lit.front() == LineRole::AllReduce && !text.contains(QStringLiteral(": 1 ")))
            counter_beside_all_reduce = text;
    });
    look.start(20);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
    look.stop();
    QVERIFY2(counter_beside_all_reduce.isEmpty(), qPrintable(counter_beside_all_reduce));
    bool saw_no_sync = false, saw_all_reduce = false;
    for (const auto& lit : panel->lit_history()) {
        saw_no_sync = saw_no_sync || lit.role == LineRole::NoSync;
        saw_all_reduce = saw_all_reduce || lit.role == LineRole::AllReduce;
    }
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QVERIFY2(summary.status == accum::RunStatus::Completed, summary.message.c_str());
    QCOMPARE(summary.world_size, 2);
    QCOMPARE(summary.samples_seen, 4 * 3 * 8 * 2);
    QVERIFY(saw_no_sync);
    QVERIFY(saw_all_reduce);
    QVERIFY(panel->allreduce_counter()->isVisible());
    QVERIFY(panel->allreduce_counter()->text().contains(QStringLiteral("2")));
    QVERIFY(window.memory_plot()->other_rank_count() >= 1);
}

void TestTeachingLab::lossPlotShowsTheScale() {
    // A loss scaler's run: the scale per window on the right axis, skipped updates crossed.
    studio::LossPlot plot;
    plot.set_loss_scaling(true);
    studio::RecordBatch batch;
    for (int i = 1; i <= 6; ++i) {
        accum::StepRecord s;
        s.step = i;
        s.loss = 1.0 / i;
        s.loss_scale = i <= 3 ? 65536.0 : 32768.0;
        s.skipped = i == 3;
        batch.steps.push_back(s);
    }
    plot.append(batch);
    plot.refresh();
    QCOMPARE(plot.scale_point_count(), 6);
    QCOMPARE(plot.skipped_point_count(), 1);
    QVERIFY(plot.plot()->yAxis2->visible());
    QCOMPARE(plot.plot()->yAxis2->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(plot.plot()->yAxis2->range().contains(65536.0) && plot.plot()->yAxis2->range().contains(32768.0));
    // Without a scaler (every record's scale is 1): no right axis, no scale line.
    plot.set_loss_scaling(false);
    plot.clear();
    plot.append(batch);
    plot.refresh();
    QCOMPARE(plot.scale_point_count(), 0);
    QVERIFY(!plot.plot()->yAxis2->visible());
}

// The memory levers: the CNN at 256 × 1 and 64 × 4, each without and with
// gradient checkpointing. The same losses (1e-5), accumulation and checkpointing
// each shrink the peak of activations, the band beneath (parameters, gradients,
// optimizer state) is the same in all four, and the bars stack the five parts.
void TestTeachingLab::memoryLeversDemo() {
    const auto plan = studio::plan_experiment(studio::Experiment::MemoryLevers, tiny_config(16, 4, 3));
    QCOMPARE(int(plan.size()), 4);
    const std::int64_t shapes[4][2] = {{256, 1}, {64, 4}, {256, 1}, {64, 4}};
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(plan[i].config.batch_size, shapes[i][0]);
        QCOMPARE(plan[i].config.accumulation_steps, shapes[i][1]);
        QCOMPARE(plan[i].config.gradient_checkpointing, i >= 2);
        QCOMPARE(plan[i].config.model, accum::ModelKind::Cnn);
        QVERIFY2(accum::validate(plan[i].config).empty(), qPrintable(plan[i].label));
    }
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.config_panel()->set_config(tiny_config(16, 4, 3));
    QSignalSpy done(&window, &studio::MainWindow::experiment_finished);
    QVERIFY(window.run_demo(QStringLiteral("memory-levers")));
    QVERIFY(done.wait(120000));
    const auto& runs = window.lab_panel()->results();
    QCOMPARE(int(runs.size()), 4);
    for (const auto& r : runs) QCOMPARE(int(r.summary.status), int(accum::RunStatus::Completed));
    QVERIFY2(window.lab_panel()->max_loss_difference() <= 1e-5,
             qPrintable(QString::number(window.lab_panel()->max_loss_difference())));
    std::int64_t a[4];
    for (int i = 0; i < 4; ++i) a[i] = runs[i].peak_activations_bytes();
    qInfo("peak activations %lld / %lld / %lld / %lld bytes", (long long)a[0], (long long)a[1], (long long)a[2],
          (long long)a[3]);
    QVERIFY(a[1] < a[0] && a[2] < a[0] && a[3] < a[1]);
    for (int i = 1; i < 4; ++i) QCOMPARE(runs[i].static_bytes_at_peak(), runs[0].static_bytes_at_peak());
    const auto bands = studio::memory_bands(runs[0]);
    qInfo("bands %lld %lld %lld %lld", (long long)bands.parameters_bytes, (long long)bands.gradients_bytes,
          (long long)bands.optimizer_state_bytes, (long long)bands.activations_bytes);
    QVERIFY(bands.parameters_bytes > 0 && bands.gradients_bytes == bands.parameters_bytes &&
            bands.optimizer_state_bytes == bands.parameters_bytes); // SGD with momentum: one copy
    QCOMPARE(bands.activations_bytes, a[0]);
    auto* bars = window.lab_panel()->charts()->memory_bars();
    QVERIFY(!bars->isHidden());
    QCOMPARE(bars->plottableCount(), 5); // the four bands and the optimizer step above the activations
    QVERIFY(window.lab_panel()->verdict_label()->text().contains(QStringLiteral("samples/s")));
}

void TestTeachingLab::runDirectoryReproducesCurves() {
    QTemporaryDir out;
    QVERIFY(out.isValid());
    const QString dir = out.filePath(QStringLiteral("run"));
    QProcess runner;
    runner.start(QStringLiteral(ACCUM_RUN_PATH),
                 {QStringLiteral("--dataset"), QStringLiteral("synthetic-pairs"), QStringLiteral("--model"),
                  QStringLiteral("mlp"), QStringLiteral("--batch-size"), QStringLiteral("16"),
                  QStringLiteral("--accumulation-steps"), QStringLiteral("2"), QStringLiteral("--max-steps"),
                  QStringLiteral("12"), QStringLiteral("--seed"), QStringLiteral("7"), QStringLiteral("--device"),
                  QStringLiteral("cpu"), QStringLiteral("--quiet"), QStringLiteral("--output-dir"), dir});
    QVERIFY(runner.waitForFinished(60000));
    QCOMPARE(runner.exitCode(), 0);

    QString error;
    const auto loaded = studio::load_run_directory(dir, &error);
    QVERIFY2(loaded.has_value(), qPrintable(error));
    QCOMPARE(int(loaded->steps.size()), 12);
    QCOMPARE(loaded->config.batch_size, 16);
    QCOMPARE(loaded->config.accumulation_steps, 2);
    QVERIFY(loaded->has_summary);
    QCOMPARE(int(loaded->summary.status), int(accum::RunStatus::Completed));

    // The runs list plots it beside a live run of the same configuration.
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.config_panel()->set_config(tiny_config(16, 2, 12));
    QSignalSpy finished(&window, &studio::MainWindow::run_finished);
    window.run_action()->trigger();
    QVERIFY(finished.wait(60000));
    auto* runs = window.runs_panel();
    QCOMPARE(runs->run_count(), 1);
    QVERIFY(runs->open_directory(dir, &error));
    QCOMPARE(runs->run_count(), 2);
    QCOMPARE(runs->plotted_points(1), 12); // the loaded run is ticked and drawn
    runs->set_ticked(0, true);
    QCOMPARE(runs->plotted_points(0), 12);
    // Same seed and configuration: the curve read from disk is the live one.
    QVERIFY(studio::max_loss_difference(runs->run(0), runs->run(1)) < 1e-6);
}

void TestTeachingLab::vietnameseTranslationLoads() {
    QTranslator translator;
    // Where the build puts it: beside the studio's executable as an installation does.
    QVERIFY(translator.load(QStringLiteral(ACCUM_TRANSLATIONS_BUILD_DIR "/accum_studio_vi.qm")));
    const auto t = [&](const char* context, const char* text) {
        return translator.translate(context, text);
    };
    for (const auto& [context, text] :
         std::vector<std::pair<const char*, const char*>>{{"studio::MainWindow", "&Run"},
                                                          {"studio::MainWindow", "&Pause"},
                                                          {"studio::MainWindow", "&Stop"},
                                                          {"studio::MainWindow", "Step one micro-batch"},
                                                          {"studio::MainWindow", "Equivalence lab"},
                                                          {"studio::CodePanel", "Step one micro-batch"},
                                                          {"studio::RunsPanel", "Open run directory…"}}) {
        const auto translated = t(context, text);
        QVERIFY2(!translated.isEmpty(), text);
        QVERIFY2(translated != QString::fromUtf8(text), text);
    }
    // Every text of every experiment (the buttons, the Lab menu, the explanations);
    // some stay as they are ("BatchNorm").
    for (const auto& info : studio::experiments())
        for (const char* text : {info.title, info.menu_title, info.tooltip, info.explanation})
            QVERIFY2(!t("studio::Experiments", text).isEmpty(), text);
    // The whole window in Vietnamese: the tab titles come from the translation.
    QCoreApplication::installTranslator(&translator);
    {
        studio::MainWindow window;
        QCOMPARE(window.tabs()->tabText(1), t("studio::MainWindow", "Equivalence lab"));
        QVERIFY(window.run_action()->text() != QStringLiteral("&Run"));
    }
    QCoreApplication::removeTranslator(&translator);
}

// The lab's samples/s and time per update leave out a run's first
// updates (a first run's cold process: compare-styles' first run measured 5,634
// against ~19,450 samples/s for the same loop) and are rounded to their spread.
void TestTeachingLab::speedsLeaveOutTheWarmUp() {
    studio::RunResult run;
    // 256 samples per update; the first two updates take 1 s each (the warm-up),
    // the rest 10, 11, 12, 10, 11, 12 ms.
    const double times[] = {1.0, 1.0, 0.010, 0.011, 0.012, 0.010, 0.011, 0.012};
    double elapsed = 0;
    for (int i = 0; i < 8; ++i) {
        elapsed += times[i];
        accum::StepRecord s;
        s.step = i + 1;
        s.elapsed_s = elapsed;
        s.samples_seen = 256 * (i + 1);
        run.steps.push_back(s);
    }
    const auto t = studio::update_timing(run);
    // Steps 4 to 8 are timed (the intervals after the first kLabWarmupUpdates updates).
    QCOMPARE(t.updates, 8 - studio::kLabWarmupUpdates - 1);
    QVERIFY2(std::abs(t.seconds - 0.011) < 1e-9, qPrintable(QString::number(t.seconds))); // the median of 11, 12, 10, 11, 12 ms
    QVERIFY(t.seconds_low >= 0.010 - 1e-9 && t.seconds_high <= 0.012 + 1e-9);
    QVERIFY(std::abs(t.samples_per_second - 256 / 0.011) < 1e-6);
    // Rounded to what the spread allows: the digit its half-width reaches.
    QCOMPARE(studio::rounded_to_spread(19437.0, 19100.0, 19800.0), QStringLiteral("19400"));
    QCOMPARE(studio::rounded_to_spread(63.62, 63.2, 64.1), QStringLiteral("63.6"));
    QCOMPARE(studio::with_spread(63.62, 63.2, 64.1), QStringLiteral("63.6 (63.2–64.1)"));
    QCOMPARE(studio::rounded_to_spread(std::nan(""), 0, 0), QStringLiteral("–"));
    // Too few updates to time: no speed rather than the warm-up's.
    run.steps.resize(4);
    QVERIFY(!std::isfinite(studio::update_timing(run).samples_per_second));
}

QTEST_MAIN(TestTeachingLab)
#include "test_teaching_lab.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
