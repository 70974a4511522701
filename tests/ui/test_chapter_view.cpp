// The code panel's Chapter view: each style's loop as the chapter writes it,
// the lines the configuration adds only when it is on, the build-up a line at a
// time, and a run at teaching pace lighting the chapter's lines in the order the
// engine executes their counterparts, micro-batch by micro-batch.

#include <QPlainTextEdit>
#include <QPushButton>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <memory>

#include "isolated_settings.h"
#include "accum/run_config.h"
#include "chapter_listing.h"
#include "code_listing.h"
#include "code_panel.h"
#include "config_panel.h"
#include "lit_order.h"
#include "main_window.h"
#include "run_controller.h"

using studio::ChapterListing;
using studio::ChapterOptions;
using studio::LineRole;

namespace {

ChapterOptions options(const char* style, int k = 4) {
    ChapterOptions o;
    o.style = QString::fromLatin1(style);
    o.accumulation_steps = k;
    return o;
}

QString text_of(const ChapterListing& chapter) { return chapter.listing().text(); }

bool has_addition(const ChapterListing& chapter) {
    return std::any_of(chapter.lines.begin(), chapter.lines.end(), [](const auto& l) { return l.addition; });
}

// The first line of `role` in the chapter, or -1.
int first_line(const ChapterListing& chapter, LineRole role) {
    const auto lines = chapter.listing().lines_for(role);
    return lines.isEmpty() ? -1 : lines.front();
}

} // namespace

class TestChapterView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void chapterWritesEachStyle_data();
    void chapterWritesEachStyle();
    void additionsOnlyWhenOn();
    void everyRoleHasALine_data();
    void everyRoleHasALine();
    void buildUpRevealsALineAtATime();
    void litLinesFollowTheEngine_data();
    void litLinesFollowTheEngine();

private:
    QTemporaryDir settings_dir_;
};

void TestChapterView::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
}

void TestChapterView::chapterWritesEachStyle_data() {
    QTest::addColumn<QString>("style");
    QTest::addColumn<QStringList>("expected");
    // The lines the chapter writes, K written as the run's value (here 3).
    QTest::newRow("pytorch") << QStringLiteral("pytorch")
                             << QStringList{QStringLiteral("gradient_accumulation_steps = 3"),
                                            QStringLiteral("for index, batch in enumerate(dataloader):"),
                                            QStringLiteral("outputs = model(**batch)"),
                                            QStringLiteral("loss = loss / gradient_accumulation_steps"),
                                            QStringLiteral("loss.backward()"),
                                            QStringLiteral("if ((index + 1) % gradient_accumulation_steps"),
                                            QStringLiteral("== 0) or (index + 1 == len(dataloader)):"),
                                            QStringLiteral("optimizer.step()"), QStringLiteral("lr_scheduler.step()"),
                                            QStringLiteral("optimizer.zero_grad()")};
    QTest::newRow("accelerator") << QStringLiteral("accelerator")
                                 << QStringList{QStringLiteral("accelerator = Accelerator("),
                                                QStringLiteral("gradient_accumulation_steps=3)"),
                                                QStringLiteral("with accelerator.accumulate(model):"),
                                                QStringLiteral("accelerator.backward(loss)"),
                                                QStringLiteral("optimizer.step()")};
    QTest::newRow("trainer") << QStringLiteral("trainer")
                             << QStringList{QStringLiteral("args = TrainingArguments("),
                                            QStringLiteral("gradient_accumulation_steps=3)"),
                                            QStringLiteral("trainer.train()"),
                                            QStringLiteral("#     accelerator.backward(loss)")};
}

void TestChapterView::chapterWritesEachStyle() {
    QFETCH(QString, style);
    QFETCH(QStringList, expected);
    const auto chapter = studio::chapter_listing(options(qPrintable(style), 3));
    const QString text = text_of(chapter);
    for (const auto& line : expected) QVERIFY2(text.contains(line), qPrintable(line + QStringLiteral("\n") + text));
    // At most 54 columns, with every addition too: at 1280 × 720 in presentation
    // mode the view has about 54 columns of the least readable text (test_layout_fit).
    auto all_on = options(qPrintable(style), 3);
    all_on.world_size = 2;
    all_on.mixed_precision = accum::MixedPrecision::Bf16;
    all_on.loss_scaler = true;
    all_on.max_grad_norm = 1.0;
    for (const auto& c : {chapter, studio::chapter_listing(all_on)})
        for (const auto& line : c.lines) QVERIFY2(line.text.size() <= 54, qPrintable(line.text));
    // About ten lines, none of them an addition in the default configuration.
    QVERIFY2(chapter.lines.size() >= 8 && chapter.lines.size() <= 16, qPrintable(text));
    QVERIFY(!has_addition(chapter));
    for (const char* absent : {"no_sync", "autocast", "scaler", "clip_grad"})
        QVERIFY2(!text.contains(QLatin1String(absent)), absent);
    // The build-up has a sentence for its first line and for every role's first line.
    const auto starts = chapter.step_starts();
    QVERIFY(!starts.empty());
    QCOMPARE(starts.front(), 0);
}

void TestChapterView::additionsOnlyWhenOn() {
    for (const char* style : {"pytorch", "accelerator", "trainer"}) {
        auto o = options(style);
        o.world_size = 2;
        auto chapter = studio::chapter_listing(o);
        QVERIFY2(text_of(chapter).contains(QStringLiteral("no_sync")) ||
                     std::string(style) == "accelerator", // accumulate() is its no_sync
                 style);
        QVERIFY2(first_line(chapter, LineRole::NoSync) >= 0, style);
        o = options(style);
        o.mixed_precision = accum::MixedPrecision::Bf16;
        chapter = studio::chapter_listing(o);
        QVERIFY2(has_addition(chapter), style);
        QVERIFY2(text_of(chapter).contains(QStringLiteral("bf16")) || text_of(chapter).contains(QStringLiteral("bfloat16")),
                 style);
        o = options(style);
        o.max_grad_norm = 1.0;
        chapter = studio::chapter_listing(o);
        QVERIFY2(has_addition(chapter), style);
        QVERIFY2(text_of(chapter).contains(QStringLiteral("1.0")), style);
    }
    auto o = options("pytorch");
    o.loss_scaler = true;
    const auto scaled = studio::chapter_listing(o);
    for (const char* line : {"scaler.scale(loss).backward()", "scaler.unscale_(optimizer)", "scaler.step(optimizer)",
                             "scaler.update()"})
        QVERIFY2(text_of(scaled).contains(QLatin1String(line)), line);
    QVERIFY(!text_of(scaled).contains(QStringLiteral("    loss.backward()")));
    // Each addition is marked as one.
    for (const auto& l : scaled.lines)
        if (l.text.contains(QStringLiteral("scaler."))) QVERIFY2(l.addition, qPrintable(l.text));
}

void TestChapterView::everyRoleHasALine_data() {
    QTest::addColumn<QString>("style");
    QTest::newRow("pytorch") << QStringLiteral("pytorch");
    QTest::newRow("accelerator") << QStringLiteral("accelerator");
    QTest::newRow("trainer") << QStringLiteral("trainer");
}

void TestChapterView::everyRoleHasALine() {
    QFETCH(QString, style);
    // Everything on: every role the engine's records can light has a line.
    auto o = options(qPrintable(style));
    o.world_size = 2;
    o.mixed_precision = accum::MixedPrecision::Bf16;
    o.loss_scaler = true;
    o.max_grad_norm = 1.0;
    const auto chapter = studio::chapter_listing(o);
    for (const auto role : {LineRole::NoSync, LineRole::Autocast, LineRole::Forward, LineRole::LossScale,
                            LineRole::Backward, LineRole::AllReduce, LineRole::Unscale, LineRole::OptimizerStep,
                            LineRole::SchedulerStep, LineRole::ScalerUpdate, LineRole::ZeroGrad})
        QVERIFY2(first_line(chapter, role) >= 0, qPrintable(studio::role_name(role)));
    // The chapter's order is the execution order (train() aside, which runs all).
    const int shared = style == QLatin1String("trainer") ? 1 : 0; // trainer.train()
    const auto plain = studio::chapter_listing(options(qPrintable(style)));
    const auto problem = test_lit::order_problem(plain.listing(),
                                                 {LineRole::Forward, LineRole::LossScale, LineRole::Backward,
                                                  LineRole::OptimizerStep, LineRole::SchedulerStep, LineRole::ZeroGrad},
                                                 shared);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    // Everything on, a window's last micro-batch lit role by role in the engine's
    // order: the lit line never jumps back up.
    const auto roles = studio::highlight_roles(test_lit::scaled_sync_record(), 2);
    QVERIFY(std::find(roles.begin(), roles.end(), LineRole::ScalerUpdate) != roles.end());
    const auto lit = test_lit::order_problem(chapter.listing(), roles, shared);
    QVERIFY2(lit.isEmpty(), qPrintable(lit));
}

void TestChapterView::buildUpRevealsALineAtATime() {
    studio::CodePanel panel;
    panel.resize(520, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const auto& chapter = panel.chapter();
    const int steps = int(chapter.step_starts().size());
    QVERIFY(steps >= 8);
    QVERIFY(!panel.building_up());
    QCOMPARE(panel.editor(QStringLiteral("chapter"))->document()->blockCount(), int(chapter.lines.size()));
    panel.next_line_button()->click(); // on demand: starts the build-up
    QVERIFY(panel.building_up());
    QCOMPARE(panel.tabs()->currentWidget(), panel.editor(QStringLiteral("chapter")));
    int shown = panel.shown_chapter_lines();
    QCOMPARE(shown, 1);
    QVERIFY(panel.why_label()->isVisible());
    QVERIFY(!panel.previous_line_button()->isEnabled());
    for (int step = 1; step < steps; ++step) {
        const QString why = panel.why_label()->text();
        panel.next_line_button()->click();
        QCOMPARE(panel.build_up_step(), step);
        QVERIFY(panel.shown_chapter_lines() > shown); // one more line (and its continuation)
        shown = panel.shown_chapter_lines();
        QCOMPARE(panel.editor(QStringLiteral("chapter"))->document()->blockCount(), shown);
        QVERIFY2(panel.why_label()->text() != why, qPrintable(why)); // each line its own sentence
    }
    QCOMPARE(shown, int(chapter.lines.size()));
    QVERIFY(!panel.next_line_button()->isEnabled());
    panel.previous_line_button()->click();
    QCOMPARE(panel.build_up_step(), steps - 2);
    QVERIFY(panel.shown_chapter_lines() < int(chapter.lines.size()));
    panel.build_up_button()->click(); // off: the whole loop
    QVERIFY(!panel.building_up());
    QVERIFY(!panel.why_label()->isVisible());
    QCOMPARE(panel.editor(QStringLiteral("chapter"))->document()->blockCount(), int(chapter.lines.size()));
}

void TestChapterView::litLinesFollowTheEngine_data() {
    QTest::addColumn<int>("mode");
    QTest::newRow("pytorch") << int(accum::Mode::Pytorch);
    QTest::newRow("accelerator") << int(accum::Mode::Accelerator);
    QTest::newRow("trainer") << int(accum::Mode::Trainer);
}

void TestChapterView::litLinesFollowTheEngine() {
    QFETCH(int, mode);
    QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")).clear();
    studio::MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // The default MLP at teaching pace: 3 updates of K = 3, a partial window at
    // the end of an epoch not reached (max_steps), 300 ms a micro-batch.
    accum::RunConfig c;
    c.mode = static_cast<accum::Mode>(mode);
    c.model = accum::ModelKind::Mlp;
    c.batch_size = 16;
    c.accumulation_steps = 3;
    c.epochs = 0;
    c.max_steps = 3;
    c.device = "cpu";
    c.eval_strategy = accum::Strategy::No;
    c.save_strategy = accum::Strategy::No;
    c.micro_step_delay_s = 0.3;
    window.config_panel()->set_config(c);
    std::vector<accum::MicroStepRecord> engine; // the engine's events, as they arrive
    connect(window.controller(), &studio::RunController::records_ready, this, [&](const studio::RecordBatch& batch) {
        for (const auto& m : batch.micro_steps) engine.push_back(m.record);
    });
    QSignalSpy finished(&window, &studio::MainWindow::run_finished);
    QVERIFY(window.start_run());
    QVERIFY(finished.wait(60000));
    QCOMPARE(int(engine.size()), 9); // 3 updates × K = 3
    auto* panel = window.code_panel();
    QCOMPARE(panel->tabs()->currentWidget(), panel->editor(QStringLiteral("chapter")));
    // The panel lights the last micro-batch's lines after the run's end too: wait for them.
    const auto last_roles = studio::highlight_roles(engine.back(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(!panel->lit_history().empty() &&
                                 panel->lit_history().back().record.micro_step == engine.back().micro_step &&
                                 panel->lit_history().back().role == last_roles.back(),
                             10000);
    const auto& history = panel->lit_history();
    const auto listing = panel->chapter().listing();
    // Micro-batch by micro-batch: the roles lit, in order, are those the engine's
    // record says it executed (highlight_roles), and each lights a chapter line.
    std::size_t at = 0;
    int shown = 0, windows_shown = 0;
    for (const auto& record : engine) {
        if (at >= history.size() || history[at].record.micro_step != record.micro_step)
            continue; // the panel skips a micro-batch when it falls two behind (a stalled GUI thread)
        ++shown;
        if (record.sync) ++windows_shown;
        const auto expected = studio::highlight_roles(record, 1);
        std::vector<LineRole> lit;
        QList<int> lines;
        while (at < history.size() && history[at].record.micro_step == record.micro_step) {
            QCOMPARE(history[at].record.sync, record.sync);
            QCOMPARE(history[at].record.window_index, record.window_index);
            lit.push_back(history[at].role);
            auto role_lines = listing.lines_for(history[at].role);
            QVERIFY2(!role_lines.isEmpty(), qPrintable(studio::role_name(history[at].role)));
            if (c.mode == accum::Mode::Trainer && role_lines.size() > 1) role_lines.removeFirst(); // train()
            lines << role_lines.front();
            ++at;
        }
        QVERIFY2(lit == expected, qPrintable(QStringLiteral("micro-batch %1").arg(record.micro_step)));
        // Down the loop, in the order the chapter writes it.
        for (int i = 1; i < lines.size(); ++i)
            QVERIFY2(lines[i] >= lines[i - 1], qPrintable(QStringLiteral("micro-batch %1: line %2 after %3")
                                                              .arg(record.micro_step)
                                                              .arg(lines[i])
                                                              .arg(lines[i - 1])));
        // The step's lines only when the engine stepped.
        const bool stepped = std::find(lit.begin(), lit.end(), LineRole::OptimizerStep) != lit.end();
        QCOMPARE(stepped, record.sync);
    }
    QCOMPARE(at, history.size()); // nothing lit that the engine did not do
    // At 300 ms a micro-batch the panel keeps up (its phases take 85 % of the pace);
    // most micro-batches, and an update's, were compared even on a busy machine.
    QVERIFY2(shown >= 5 && windows_shown >= 1,
             qPrintable(QStringLiteral("%1 of 9 micro-batches shown, %2 updates").arg(shown).arg(windows_shown)));
}

QTEST_MAIN(TestChapterView)

#include "test_chapter_view.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
