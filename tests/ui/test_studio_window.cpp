// Drives the studio's MainWindow offscreen: tiny real runs through the engine
// (the configuration form's own behaviour: test_config_form.cpp).
// Settings are isolated in a QTemporaryDir (QSettings::setPath + XDG_CONFIG_HOME).

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <cmath>
#include <memory>

#include "isolated_settings.h"
#include "studio_window_fixture.h"
#include "accum/engine_messages.h"
#include "accum/run_config.h"
#include "accum/session.h"
#include "accumulation_meter.h"
#include "config_panel.h"
#include "engine_use.h"
#include "experiments.h"
#include "lab_panel.h"
#include "lesson_panel.h"
#include "loss_plot.h"
#include "main_window.h"
#include "runs_folder.h"
#include "memory_estimator.h"
#include "memory_plot.h"
#include "oom_banner.h"
#include "refresh_budget.h"
#include "run_controller.h"

using studio::MainWindow;

class TestStudioWindow : public QObject, protected StudioWindowFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void tinyRunFillsPlotsAndTable();
    void stopEndsTheRun();
    void eventLoopKeepsTurning();
    void outOfMemoryBannerAndSuggestion();
    void closingMidRunLeavesNoThread();
    void eachRunGetsItsOwnDirectory();
    void refreshBudgetIntervals();
    void memoryEstimateBesideEffectiveBatch();
    void cudaAskedForWithoutAGpu();
    void writeFailureKeepsTheWindow();
    void engineUseDecidesEveryAction();
    void oneRunAtATime();
    void epochShorterThanAWindow();
    void statusLineKeepsTheWholeMessage();
    void runLogFollowsNewLines();
};

void TestStudioWindow::initTestCase() { isolate_test_settings(); }
void TestStudioWindow::init() { show_new_window(); }
void TestStudioWindow::cleanup() { close_window(); }

void TestStudioWindow::tinyRunFillsPlotsAndTable() {
    configure_tiny_run(32, 4, 20);
    accum::SummaryRecord summary;
    QVERIFY(run_to_end(summary));
    QCOMPARE(int(summary.status), int(accum::RunStatus::Completed));
    QCOMPARE(summary.optimizer_steps, 20);
    QTRY_COMPARE(window_->loss_plot()->step_point_count(), 20);  // one per optimizer step
    QCOMPARE(window_->loss_plot()->micro_point_count(), 80);      // 20 steps × K = 4
    QVERIFY(window_->loss_plot()->eval_point_count() >= 1);       // eval at the end of the run
    QVERIFY(window_->memory_plot()->point_count() >= 1);
    QVERIFY(!window_->memory_plot()->has_oom_marker());
    QVERIFY(window_->eval_table()->rowCount() >= 1);
    const auto accuracy = window_->eval_table()->item(0, 3)->text().toDouble();
    QVERIFY(accuracy > 0.0 && accuracy <= 1.0);
    QCOMPARE(window_->progress_bar()->value(), window_->progress_bar()->maximum());
    QVERIFY(window_->run_action()->isEnabled());
    // The thread count the run used and why: the engine's "threads: N (…), the
    // default …" log line, as a label with the line as its tooltip.
    const QString threads_line = window_->threads_label()->toolTip();
    QVERIFY2(threads_line.startsWith(QStringLiteral("threads: ")), qPrintable(threads_line));
    QVERIFY2(window_->log_view()->toPlainText().contains(threads_line), qPrintable(threads_line));
    const int count = QStringView(threads_line).mid(9).toString().section(QLatin1Char(' '), 0, 0).toInt();
    QVERIFY(count >= 1);
    QCOMPARE(window_->threads_label()->text(), count == 1 ? QStringLiteral("1 thread") : QStringLiteral("%1 threads").arg(count));
    // The x axis and smoothing controls rebuild the same points.
    window_->loss_plot()->set_x_axis(studio::LossPlot::XAxis::Samples);
    window_->loss_plot()->set_smoothing(0.6);
    window_->loss_plot()->set_log_scale(true);
    QCOMPARE(window_->loss_plot()->step_point_count(), 20);
    // Exports.
    QTemporaryDir out;
    QVERIFY(window_->loss_plot()->save_image(out.filePath("loss.png")));
    QVERIFY(window_->memory_plot()->save_image(out.filePath("memory.pdf")));
    QVERIFY(window_->export_csv(out.filePath("loss.csv"), out.filePath("memory.csv")));
    QFile csv(out.filePath("loss.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QVERIFY(csv.readAll().count('\n') >= 1 + 80 + 20 + 1);
    // Memory by category: the four bands of the moment stack up to the total at
    // every record (the CSV has them as columns; a peak has a fifth, the optimizer
    // step), a faint tick per optimizer step, and hovering names the bands with
    // their figures.
    auto* memory = window_->memory_plot();
    const auto bands = memory->band_bytes();
    QCOMPARE(int(bands.size()), 5);
    QVERIFY(bands[0] > 0); // parameters
    QCOMPARE(memory->sync_tick_count(), 20);
    const QString hover = memory->hover_text(0.0);
    for (const char* band : {"activations", "optimizer state", "gradients", "parameters"})
        QVERIFY2(hover.contains(QLatin1String(band)), qPrintable(hover));
    QVERIFY(memory->caption()->text().contains(QStringLiteral("activations")));
    QFile memory_csv(out.filePath("memory.csv"));
    QVERIFY(memory_csv.open(QIODevice::ReadOnly));
    const auto lines = QString::fromUtf8(memory_csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(lines.size() >= 2);
    const auto header = lines[0].split(QLatin1Char(','));
    const int total = int(header.indexOf(QStringLiteral("memory_bytes")));
    const int first = int(header.indexOf(QStringLiteral("parameters_bytes")));
    QVERIFY(total >= 0 && first >= 0);
    QCOMPARE(header.mid(first, 4), QStringList({"parameters_bytes", "gradients_bytes", "optimizer_state_bytes",
                                                "activations_bytes"}));
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const auto cells = lines[i].split(QLatin1Char(','));
        qint64 sum = 0;
        for (int c = first; c < first + 4; ++c) sum += cells[c].toLongLong();
        QCOMPARE(sum, cells[total].toLongLong());
    }
}

void TestStudioWindow::stopEndsTheRun() {
    configure_tiny_run(32, 4, 100000);
    set_spin("pace_ms", 5); // keeps the run going long enough to stop it: 100000 updates would take hours
    QSignalSpy finished(window_.get(), &MainWindow::run_finished);
    window_->run_action()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window_->loss_plot()->micro_point_count() > 8, 30000);
    QElapsedTimer timer;
    timer.start();
    window_->stop_action()->trigger();
    QVERIFY(finished.wait(60000));
    std::printf("BENCH studio.stop %lld ms\n", static_cast<long long>(timer.elapsed()));
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QCOMPARE(int(summary.status), int(accum::RunStatus::Stopped));
    QVERIFY(window_->run_action()->isEnabled());
}

// The event loop turns while the engine trains: the plot grows between the
// ticks of a 10 ms timer, several times, rather than all at once at the end.
// The worst gap between ticks is a figure for bench/latencies.py.
void TestStudioWindow::eventLoopKeepsTurning() {
    // A fast model, 2 ms after each micro-batch: records arrive far more often than
    // the plot's refresh, and the 800 micro-batches last at least 1.6 s on any
    // machine, so the plot has dozens of refreshes in which to grow (at full speed
    // a fast, quiet machine can train them all between two refreshes).
    configure_tiny_run(16, 2, 400);
    set_spin("pace_ms", 2);
    int last_points = 0, grew_between_ticks = 0;
    QElapsedTimer since_tick;
    qint64 worst_gap = 0;
    int ticks = 0;
    QTimer ticker;
    ticker.setInterval(10);
    connect(&ticker, &QTimer::timeout, this, [&] {
        if (ticks > 0) {
            const auto gap = since_tick.elapsed();
            if (gap > 50) qInfo("gap of %lld ms at tick %d (%d micro points)", gap, ticks, window_->loss_plot()->micro_point_count());
            worst_gap = std::max(worst_gap, gap);
        }
        const int points = window_->loss_plot()->micro_point_count();
        if (points != last_points && points < 800) ++grew_between_ticks;
        last_points = points;
        since_tick.restart();
        ++ticks;
    });
    QSignalSpy finished(window_.get(), &MainWindow::run_finished);
    since_tick.start();
    ticker.start();
    window_->run_action()->trigger();
    QVERIFY(finished.wait(60000));
    ticker.stop();
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QCOMPARE(int(summary.status), int(accum::RunStatus::Completed));
    QVERIFY2(grew_between_ticks >= 3, qPrintable(QString::number(grew_between_ticks)));
    std::printf("BENCH studio.worst_event_loop_gap %lld ms\n", static_cast<long long>(worst_gap));
    QTRY_COMPARE(window_->loss_plot()->micro_point_count(), 800);
}

void TestStudioWindow::outOfMemoryBannerAndSuggestion() {
    // Measured with accum-run: mlp 2048 × 1 peaks at 14.2 MiB, so it runs out of
    // memory under a 10 MiB budget; the suggested 1024 × 2 peaks at 9.2 MiB and fits.
    configure_tiny_run(2048, 1, 3);
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("10MiB"));
    window_->resize(1500, 950); // the size of the README's screenshots: a memory plot about 110 px high
    accum::SummaryRecord oom;
    QVERIFY(run_to_end(oom));
    QCOMPARE(int(oom.status), int(accum::RunStatus::OutOfMemory));
    QVERIFY(window_->oom_banner()->isVisible());
    QVERIFY(window_->run_action()->isEnabled());
    QVERIFY(window_->memory_plot()->has_oom_marker());
    // The point of the demo: the class sees where it ran out, not a mark cut by the
    // plot's edge or hidden under the legend (both happened before).
    QVERIFY(window_->memory_plot()->oom_marker_in_clear_view());
    QCOMPARE(oom.suggested_batch_size * oom.suggested_accumulation_steps, 2048);
    // One click applies the suggestion and runs it (it took a second click on Run).
    QSignalSpy finished(window_.get(), &MainWindow::run_finished);
    QTest::mouseClick(window_->oom_banner()->apply_button(), Qt::LeftButton);
    QVERIFY(!window_->oom_banner()->isVisible());
    QVERIFY(window_->controller()->is_running());
    const auto c = window_->config_panel()->config();
    QCOMPARE(c.batch_size, oom.suggested_batch_size);
    QCOMPARE(c.accumulation_steps, oom.suggested_accumulation_steps);
    QVERIFY(finished.wait(60000));
    const auto ok = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QCOMPARE(int(ok.status), int(accum::RunStatus::Completed));
    QCOMPARE(window_->last_live_run().config.batch_size, oom.suggested_batch_size);
    QVERIFY(!window_->oom_banner()->isVisible());
}

void TestStudioWindow::closingMidRunLeavesNoThread() {
    configure_tiny_run(32, 4, 100000);
    set_spin("pace_ms", 5);
    window_->run_action()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window_->loss_plot()->micro_point_count() > 4, 30000);
    const QThread* engine = window_->controller()->engine_thread();
    QVERIFY(engine->isRunning());
    QElapsedTimer timer;
    timer.start();
    QVERIFY(window_->close());
    QVERIFY(engine->isFinished()); // close() returned with the engine's thread ended
    std::printf("BENCH studio.close_mid_run %lld ms\n", static_cast<long long>(timer.elapsed()));
    QVERIFY(!window_->controller()->is_running());
}

// The redraw interval follows the window thread's measured share of a core
// towards RefreshBudget::kShare: at 100 ms, twice the share asks for 200 ms; five
// times asks for 500 ms at once (slowing down is not limited); a tenth of the
// share at 400 ms asks for 40 ms but speeds up to 200 ms at most; half the share
// at 200 ms asks for 100 ms; the interval stays within 100–500 ms, and unchanged
// when nothing was measured.
// The estimate beside the effective batch follows the form: debounced (three
// changes in quick succession make one estimate), on a worker thread, and the
// label says the predicted peak; an invalid form shows none.
void TestStudioWindow::memoryEstimateBesideEffectiveBatch() {
    auto* panel = window_->config_panel();
    auto* estimator = panel->estimator();
    QSignalSpy estimated(estimator, &studio::MemoryEstimator::estimated);
    set_combo("dataset", QStringLiteral("synthetic-pairs"));
    set_combo("model", QStringLiteral("mlp"));
    const int started = estimator->started_count();
    set_spin("batch_size", 16);
    set_spin("batch_size", 24);
    set_spin("batch_size", 32);
    QTRY_VERIFY_WITH_TIMEOUT(panel->estimate().ok && panel->estimate().batch_size == 32, 30000);
    QVERIFY(estimator->started_count() - started <= 2); // the changes within the debounce made one request
    const auto label = child<QLabel>("memory_estimate")->text();
    QVERIFY2(label.contains(QStringLiteral("at peak")), qPrintable(label));
    QVERIFY(panel->estimate().predicted_peak_bytes > double(panel->estimate().static_bytes()));
    // A budget below the prediction is flagged.
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("1KiB"));
    QTRY_VERIFY_WITH_TIMEOUT(child<QLabel>("memory_estimate")->text().contains(QStringLiteral("over the")), 30000);
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("lots"));
    QVERIFY(child<QLabel>("memory_estimate")->text().contains(QStringLiteral("valid")));
    QVERIFY(!panel->estimate().ok);
}

void TestStudioWindow::refreshBudgetIntervals() {
    using studio::RefreshBudget;
    constexpr double share = RefreshBudget::kShare;
    QCOMPARE(RefreshBudget::next_interval_ms(100, 2 * share), 200);
    QCOMPARE(RefreshBudget::next_interval_ms(100, 5 * share), 500);
    QCOMPARE(RefreshBudget::next_interval_ms(100, 10 * share), 500);
    QCOMPARE(RefreshBudget::next_interval_ms(400, 0.1 * share), 200);
    QCOMPARE(RefreshBudget::next_interval_ms(200, 0.5 * share), 100);
    QCOMPARE(RefreshBudget::next_interval_ms(300, share), 300);
    QCOMPARE(RefreshBudget::next_interval_ms(400, 30 * share), 500);
    QCOMPARE(RefreshBudget::next_interval_ms(100, 0.1 * share), 100);
    QCOMPARE(RefreshBudget::next_interval_ms(250, 0.0), 250);
    QCOMPARE(RefreshBudget::next_interval_ms(250, -1.0), 250);
    QCOMPARE(RefreshBudget::next_interval_ms(250, std::nan("")), 250);
    QVERIFY(studio::thread_cpu_seconds() > 0.0); // Linux has a per-thread CPU clock
    RefreshBudget budget;
    QCOMPARE(budget.interval_after_redraw(250), 250); // not measuring yet
    budget.start();
    QCOMPARE(budget.interval_after_redraw(250), 250); // under half a second measured
}

// With a folder for runs, each run writes into a new directory of its own, made
// for it (two runs in the same second included), never into an existing one.
void TestStudioWindow::eachRunGetsItsOwnDirectory() {
    QTemporaryDir folder;
    QDir(folder.path()).mkdir(QStringLiteral("someone-elses"));
    configure_tiny_run(32, 2, 2);
    child<QLineEdit>("output_dir")->setText(folder.path());
    accum::SummaryRecord first, second;
    QVERIFY(run_to_end(first));
    QVERIFY(run_to_end(second));
    QCOMPARE(first.status, accum::RunStatus::Completed);
    QCOMPARE(second.status, accum::RunStatus::Completed);
    auto dirs = QDir(folder.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    dirs.removeOne(QStringLiteral("someone-elses"));
    QCOMPARE(dirs.size(), 2);
    for (const auto& d : dirs)
        for (const char* file : {"accum_config.json", "metrics.jsonl", "summary.json"})
            QVERIFY2(QFile::exists(folder.filePath(d + "/" + file)), qPrintable(d + "/" + file));
    QVERIFY(QDir(folder.filePath("someone-elses")).isEmpty());
}

// A configuration that asks for CUDA on a machine without a CUDA device (or a
// build without CUDA): the run ends with the engine's words for it, the window
// stays, and the memory plot keeps its CPU title.
void TestStudioWindow::cudaAskedForWithoutAGpu() {
    for (const auto& d : accum::list_devices())
        if (d.available && d.name != "cpu") QSKIP("this machine has a CUDA device: nothing to refuse");
    configure_tiny_run(32, 2, 2);
    auto config = window_->config_panel()->config();
    config.device = "cuda";
    QTemporaryDir dir;
    const auto path = dir.filePath("cuda.json");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(accum::to_json_text(config)));
    file.close();
    QString error;
    QVERIFY2(window_->load_config(path, &error), qPrintable(error));
    QCOMPARE(window_->config_panel()->config().device, std::string("cuda"));
    accum::SummaryRecord summary;
    QVERIFY(run_to_end(summary));
    QVERIFY2(summary.status != accum::RunStatus::Completed, summary.message.c_str());
    const auto status = child<QLabel>("status_label")->text();
    QVERIFY2(status.contains(QStringLiteral("no CUDA device")) || status.contains(QStringLiteral("has no CUDA")),
             qPrintable(status));
    QVERIFY(window_->isVisible());
    QVERIFY(!window_->memory_plot()->title_text().contains(QStringLiteral("GPU")));
    // The window is still usable: a CPU run after it completes.
    set_combo("device", QStringLiteral("cpu"));
    QVERIFY(run_to_end(summary));
    QCOMPARE(summary.status, accum::RunStatus::Completed);
}

// A run whose files cannot be written any more (its directory pulled
// away mid-run) ends with the message accum-run prints — the file and the
// reason — in the status line; the window stays, and the next run runs.
void TestStudioWindow::writeFailureKeepsTheWindow() {
    QTemporaryDir folder, elsewhere;
    configure_tiny_run(32, 2, 100000);
    set_spin("pace_ms", 5); // long enough to take its directory away
    child<QLineEdit>("output_dir")->setText(folder.path());
    QSignalSpy finished(window_.get(), &MainWindow::run_finished);
    window_->run_action()->trigger();
    QString run_dir;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const auto dirs = QDir(folder.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
            if (dirs.size() != 1) return false;
            run_dir = folder.filePath(dirs.front());
            return QFileInfo(run_dir + "/metrics.jsonl").size() > 1000;
        }(),
        30000);
    QVERIFY(QDir().rename(run_dir, elsewhere.filePath("moved")));
    QVERIFY2(finished.wait(20000), "the run did not end after its directory vanished");
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QCOMPARE(int(summary.status), int(accum::RunStatus::Error));
    QCOMPARE(summary.exit_code, accum::exit_code::write_failed);
    const QString expected = "no such file or directory while writing " + run_dir + "/metrics.jsonl";
    QCOMPARE(QString::fromStdString(summary.message), expected);
    const QString status = child<QLabel>("status_label")->text();
    QVERIFY2(status.contains(expected), qPrintable(status)); // the words accum-run prints
    QVERIFY(window_->isVisible());
    QVERIFY(window_->run_action()->isEnabled());
    set_spin("max_steps", 2);
    set_spin("pace_ms", 0);
    accum::SummaryRecord again;
    QVERIFY(run_to_end(again));
    QCOMPARE(int(again.status), int(accum::RunStatus::Completed));
}

// One training run per process (ARCHITECTURE.md §4.4): every enabled action and
// every refusal comes from one snapshot of what the engine is busy with.
void TestStudioWindow::engineUseDecidesEveryAction() {
    using studio::EngineState;
    using studio::EngineUser;
    const EngineState idle;
    QCOMPARE(idle.user(), EngineUser::None);
    QVERIFY(studio::engine_refusal(idle).isEmpty());
    auto a = studio::engine_actions(idle, true);
    QVERIFY(a.run && a.experiments && a.configure);
    QVERIFY(!a.pause && !a.stop && !a.step);
    QVERIFY(!studio::engine_actions(idle, false).run); // an invalid configuration does not run
    QVERIFY(studio::engine_actions(idle, false).experiments);

    EngineState live;
    live.live_running = true;
    QCOMPARE(live.user(), EngineUser::LiveRun);
    a = studio::engine_actions(live, true);
    QVERIFY(!a.run && !a.experiments && !a.configure);
    QVERIFY(a.pause && a.stop && !a.step);
    live.live_paused = true;
    QVERIFY(studio::engine_actions(live, true).step);

    EngineState lab;
    lab.lab_running = true;
    QCOMPARE(lab.user(), EngineUser::LabExperiment);
    a = studio::engine_actions(lab, true);
    QVERIFY(!a.run && !a.experiments && !a.configure);
    QVERIFY(!a.pause && !a.stop && !a.step); // the lab has its own Cancel

    EngineState lesson = lab;
    lesson.lesson_step = true;
    QCOMPARE(lesson.user(), EngineUser::LessonStep);
    EngineState lesson_waiting; // a lesson with nothing running holds nothing
    lesson_waiting.lesson_step = true;
    QCOMPARE(lesson_waiting.user(), EngineUser::None);

    // Each refusal says that another run goes, and which, in its own words.
    QStringList refusals;
    for (const auto& busy : {live, lab, lesson}) {
        const auto why = studio::engine_refusal(busy);
        QVERIFY2(why.contains(QLatin1String("another run")), qPrintable(why));
        QVERIFY2(!refusals.contains(why), qPrintable(why));
        refusals << why;
    }

    // The engine's own refusal, as a summary carries it.
    accum::SummaryRecord summary;
    QVERIFY(!studio::engine_refused_as_busy(summary));
    summary.status = accum::RunStatus::Error;
    summary.detail.code = accum::message_code::run_in_progress;
    QVERIFY(studio::engine_refused_as_busy(summary));
}

// The live run and the lab's experiments take turns: while one runs the other's
// controls are off, and a start asked for anyway is refused in the status bar.
void TestStudioWindow::oneRunAtATime() {
    const auto lab_controls_enabled = [this](bool enabled) {
        for (const auto& info : studio::experiments()) {
            auto* button = window_->lab_panel()->button(info.experiment);
            auto* action = window_->findChild<QAction*>(info.object_name() + QStringLiteral("_action"));
            if (!button || !action) return false;
            if (button->isEnabled() != enabled || action->isEnabled() != enabled) return false;
        }
        return true;
    };
    QVERIFY(lab_controls_enabled(true));

    // A live run at teaching pace: the lab may not start.
    configure_tiny_run(16, 2, 100000);
    set_spin("pace_ms", 5);
    QSignalSpy run_finished(window_.get(), &MainWindow::run_finished);
    QVERIFY(window_->start_run());
    QVERIFY(window_->controller()->is_running());
    QCOMPARE(window_->engine_state().user(), studio::EngineUser::LiveRun);
    QVERIFY(lab_controls_enabled(false));
    QVERIFY(!window_->run_action()->isEnabled());
    QVERIFY(!window_->config_panel()->isEnabled());
    QVERIFY(!window_->run_experiment(studio::Experiment::CompareStyles));
    QVERIFY(!window_->lab_panel()->is_running());
    const QString live_refusal = studio::engine_refusal(window_->engine_state());
    QVERIFY2(window_->statusBar()->currentMessage().contains(live_refusal),
             qPrintable(window_->statusBar()->currentMessage()));
    window_->statusBar()->clearMessage();
    QVERIFY(window_->run_demo(QStringLiteral("pitfall-tokens"))); // a known demo, refused the same way
    QVERIFY(!window_->lab_panel()->is_running());
    QVERIFY(window_->statusBar()->currentMessage().contains(live_refusal));
    window_->statusBar()->clearMessage();
    QVERIFY(!window_->start_run()); // not a second live run either
    QVERIFY(window_->statusBar()->currentMessage().contains(live_refusal));
    window_->stop_action()->trigger();
    QVERIFY(run_finished.wait(10000));
    QVERIFY(lab_controls_enabled(true));

    // A lab experiment: the live run may not start, from the action or from a call.
    set_spin("pace_ms", 0);
    set_spin("max_steps", 4);
    QSignalSpy experiment_finished(window_.get(), &MainWindow::experiment_finished);
    window_->lab_panel()->button(studio::Experiment::CompareStyles)->click();
    QVERIFY(window_->lab_panel()->is_running());
    QCOMPARE(window_->engine_state().user(), studio::EngineUser::LabExperiment);
    QVERIFY(lab_controls_enabled(false));
    QVERIFY(!window_->run_action()->isEnabled());
    QVERIFY(!window_->pause_action()->isEnabled());
    window_->statusBar()->clearMessage();
    run_finished.clear();
    QVERIFY(!window_->start_run());
    QVERIFY(!window_->controller()->is_running());
    const QString lab_refusal = studio::engine_refusal(window_->engine_state());
    QVERIFY2(window_->statusBar()->currentMessage().contains(lab_refusal),
             qPrintable(window_->statusBar()->currentMessage()));
    // Nor the lesson's live step: it says why and leaves the configuration alone.
    QSignalSpy step_finished(window_->lesson_panel(), &studio::LessonPanel::step_finished);
    window_->start_lesson(studio::lesson_step_index(QStringLiteral("mechanism")));
    QCOMPARE(step_finished.size(), 1);
    QCOMPARE(step_finished.first().at(1).toBool(), false);
    QVERIFY2(window_->lesson_panel()->verdict().text.contains(lab_refusal),
             qPrintable(window_->lesson_panel()->verdict().text));
    QCOMPARE(window_->config_panel()->config().max_steps, 4);
    window_->lesson_panel()->close_lesson();
    QVERIFY(experiment_finished.wait(60000));
    QVERIFY(run_finished.isEmpty());
    QVERIFY(lab_controls_enabled(true));
    QVERIFY(window_->run_action()->isEnabled());
    QVERIFY(window_->config_panel()->isEnabled());
}

// K = 10000 with B = 64: Fashion-MNIST's 60000 samples make ceil(60000 / 64) = 938
// micro-batches an epoch, so the epoch ends first and each update takes all 60000
// (the partial window is flushed at the epoch's end, ARCHITECTURE.md I5).
void TestStudioWindow::epochShorterThanAWindow() {
    set_combo("dataset", QStringLiteral("fashion-mnist"));
    set_spin("batch_size", 64);
    set_spin("accumulation_steps", 10000);
    set_spin("nproc_per_node", 1);
    const auto text = child<QLabel>("effective_batch")->text();
    QVERIFY2(text.contains(QStringLiteral("640000")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("938")) && text.contains(QStringLiteral("60000")), qPrintable(text));
    set_spin("accumulation_steps", 4);
    QVERIFY(!child<QLabel>("effective_batch")->text().contains(QStringLiteral("938")));
}

// A start refused for a problem: the status line beside the progress bar says it
// whole, on as many lines as it needs.
void TestStudioWindow::statusLineKeepsTheWholeMessage() {
    window_->resize(1024, 700);
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("a budget far too long to read as any size at all"));
    set_spin("accumulation_steps", 0);
    QVERIFY(!window_->start_run());
    auto* status = window_->status_label();
    QTRY_VERIFY(status->text().contains(QStringLiteral("Memory budget")));
    QVERIFY(status->text().contains(QStringLiteral("Accumulation (K)")));
    lay_out_pending();
    QVERIFY2(status->heightForWidth(status->width()) <= status->height(),
             qPrintable(QStringLiteral("%1 > %2").arg(status->heightForWidth(status->width())).arg(status->height())));
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("0"));
    set_spin("accumulation_steps", 4);
}

// The run log follows new lines while the user is at its end, stops when the user
// scrolls up to read, and follows again from the end.
void TestStudioWindow::runLogFollowsNewLines() {
    window_->resize(1280, 720);
    // A log line every logging step: more lines than the log shows, and a run far
    // longer than the test (it stops the run at the end), so that lines keep coming
    // through every phase however fast or slow the machine is. The waits' bounds
    // only catch a log that stopped: lines come slowly on a loaded machine.
    configure_tiny_run(8, 1, 20000);
    set_spin("pace_ms", 4);
    auto* log = window_->log_view();
    auto* bar = log->verticalScrollBar();
    QSignalSpy finished(window_.get(), &MainWindow::run_finished);
    QVERIFY(window_->start_run());
    QTRY_VERIFY_WITH_TIMEOUT(bar->maximum() > 20, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(bar->value(), bar->maximum(), 10000);
    const int lines = log->blockCount();
    QTRY_VERIFY_WITH_TIMEOUT(log->blockCount() > lines + 5, 60000);
    QCOMPARE(bar->value(), bar->maximum()); // still following
    // The user scrolls up: the log stays where the user reads.
    bar->triggerAction(QAbstractSlider::SliderPageStepSub);
    const int reading = bar->value();
    QVERIFY(reading < bar->maximum());
    const int more = log->blockCount();
    QTRY_VERIFY_WITH_TIMEOUT(log->blockCount() > more + 5, 60000);
    QCOMPARE(bar->value(), reading);
    // Back at the end: it follows again.
    bar->triggerAction(QAbstractSlider::SliderToMaximum);
    const int again = log->blockCount();
    QTRY_VERIFY_WITH_TIMEOUT(log->blockCount() > again + 5, 60000);
    QCOMPARE(bar->value(), bar->maximum());
    window_->stop_action()->trigger();
    QVERIFY(finished.wait(10000));
    QCOMPARE(bar->value(), bar->maximum());
}

QTEST_MAIN(TestStudioWindow)
#include "test_studio_window.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
