// In front of a class. The guided lesson walks its steps and each ends
// as it says; the window's first size fits projector screens; presentation mode
// enlarges text and lines and gives everything back; the pitfall demos plot
// |Δ loss| on a log scale where right and wrong are decades apart.
//
// Runs offscreen on two screens made for it (the offscreen platform's config
// file): a 1024 × 768 projector (primary) and a 1280 × 720 one beside it.

#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFontInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <cmath>
#include <memory>
#include <qcustomplot.h>

#include "isolated_settings.h"
#include "accum/engine_messages.h"
#include "code_panel.h"
#include "config_panel.h"
#include "lab_panel.h"
#include "lesson.h"
#include "lesson_panel.h"
#include "loss_plot.h"
#include "main_window.h"
#include "memory_plot.h"
#include "lesson_fixtures.h"
#include "offscreen_screens.h"
#include "oom_banner.h"
#include "run_controller.h"
#include "screen_fit.h"

using studio::MainWindow;

namespace {

using test_screens::screen_of_size;

// Waits for the lesson's step to end; fails (returns false) on timeout.
bool wait_step(QSignalSpy& finished, int timeout_ms = 90000) {
    return !finished.isEmpty() || finished.wait(timeout_ms);
}

using test_fixtures::lesson_step1_out_of_memory;

double delta_max(const QCPGraph* g) {
    double worst = 0.0;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) worst = std::max(worst, it->value);
    return worst;
}

} // namespace

class TestClassroom : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void screenFitFunctions();
    void firstSizeFitsTheScreen_data();
    void firstSizeFitsTheScreen();
    void savedGeometryIsClampedToTheScreen();
    void presentationModeEnlargesAndRestores();
    void presentationFitsA1024Projector();
    void lessonStepsAreWellFormed();
    void lessonWalksAllSteps();
    void lessonRunsAgainAndGoesBack();
    void lessonNextWhileRunningStopsTheStep();
    void lessonLeavesARunningRunAlone();
    void tokenPitfallIsDecadesApart();
    void lessonTranslatedToVietnamese();

private:
    QTemporaryDir settings_dir_;
};

void TestClassroom::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
    QVERIFY2(screen_of_size(1024, 768) && screen_of_size(1280, 720), "the offscreen screens were not configured");
}

void TestClassroom::init() {
    // Every test starts without a saved geometry or configuration.
    QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")).clear();
}

void TestClassroom::screenFitFunctions() {
    const QSize frame(16, 40);
    const QSize minimum(900, 600);
    // A desk monitor has room for the desk size.
    QCOMPARE(studio::first_window_size({1920, 1080}, minimum, frame), studio::kDeskWindowSize);
    // Projectors: the screen less the frame and a 4 % margin (1024 / 25 = 40, 768 / 25 = 30).
    QCOMPARE(studio::first_window_size({1024, 768}, minimum, frame), QSize(1024 - 16 - 40, 768 - 40 - 30));
    QCOMPARE(studio::first_window_size({1280, 720}, minimum, frame), QSize(1280 - 16 - 51, 720 - 40 - 28));
    // A minimum larger than that margin wins over it, never over the screen.
    QCOMPARE(studio::first_window_size({1024, 768}, {990, 720}, frame), QSize(990, 720));
    QCOMPARE(studio::first_window_size({1024, 768}, {1200, 900}, frame), QSize(1024 - 16, 768 - 40));

    const QRect screen(1024, 0, 1280, 720);
    QCOMPARE(studio::clamp_to_screen({1100, 50, 600, 400}, screen), QRect(1100, 50, 600, 400)); // already inside
    QCOMPARE(studio::clamp_to_screen({2000, 500, 600, 400}, screen), QRect(1704, 320, 600, 400)); // moved in
    QCOMPARE(studio::clamp_to_screen({0, 0, 1516, 990}, screen), screen);                       // shrunk and moved

    // Text at least 1/40 of the screen's height, and never less than 1.5 ×.
    QCOMPARE(studio::presentation_scale(720, 13.0), studio::kMinPresentationScale);
    QVERIFY(studio::kMinPresentationScale >= 1.5);
    QCOMPARE(studio::presentation_scale(1080, 12.0), 1080 / 40.0 / 12.0);
    QCOMPARE(studio::presentation_scale(2160, 12.0), 2.5);
}

void TestClassroom::firstSizeFitsTheScreen_data() {
    QTest::addColumn<QSize>("screen_size");
    QTest::newRow("1024x768") << QSize(1024, 768);
    QTest::newRow("1280x720") << QSize(1280, 720);
}

void TestClassroom::firstSizeFitsTheScreen() {
    QFETCH(QSize, screen_size);
    auto* screen = screen_of_size(screen_size.width(), screen_size.height());
    QVERIFY(screen);
    MainWindow window;
    window.lesson_panel()->show(); // the lesson's bar takes room too
    window.fit_to_screen(screen);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QRect available = screen->availableGeometry();
    qInfo("screen %dx%d: window %dx%d (minimum %dx%d), frame at %d,%d", available.width(), available.height(),
          window.width(), window.height(), window.minimumSizeHint().width(), window.minimumSizeHint().height(),
          window.frameGeometry().x(), window.frameGeometry().y());
    QVERIFY2(available.contains(window.frameGeometry()), "the window runs off the screen");
    // Nothing cut off: every panel at least its minimum size, inside the window.
    const QRect inside = window.rect();
    const QList<QWidget*> panels = {window.config_area(), window.loss_plot(), window.memory_plot(),
                                    window.code_panel(), window.lesson_panel(), window.tabs()};
    for (auto* w : panels) {
        const QRect r(w->mapTo(&window, QPoint(0, 0)), w->size());
        QVERIFY2(inside.contains(r), qPrintable(w->objectName()));
        QVERIFY2(w->width() >= w->minimumSizeHint().width() && w->height() >= w->minimumSizeHint().height(),
                 qPrintable(QStringLiteral("%1 is %2x%3, below its minimum %4x%5")
                                .arg(w->objectName())
                                .arg(w->width())
                                .arg(w->height())
                                .arg(w->minimumSizeHint().width())
                                .arg(w->minimumSizeHint().height())));
    }
}

void TestClassroom::savedGeometryIsClampedToTheScreen() {
    auto* projector = screen_of_size(1024, 768);
    {
        // Saved on a large monitor: 1500 × 950 at (300, 200).
        MainWindow big;
        big.resize(1500, 950);
        big.move(300, 200);
        QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio"))
            .setValue(QStringLiteral("geometry"), big.saveGeometry());
    }
    MainWindow window;
    window.fit_to_screen(projector);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY2(projector->availableGeometry().contains(window.frameGeometry()),
             qPrintable(QStringLiteral("frame %1,%2 %3x%4")
                            .arg(window.frameGeometry().x())
                            .arg(window.frameGeometry().y())
                            .arg(window.frameGeometry().width())
                            .arg(window.frameGeometry().height())));
}

void TestClassroom::presentationModeEnlargesAndRestores() {
    auto* screen = screen_of_size(1280, 720);
    MainWindow window;
    window.fit_to_screen(screen);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.lesson_panel()->show();
    QTRY_VERIFY(window.height() >= window.minimumSizeHint().height()); // laid out with the lesson's bar
    const QRect desk_geometry = window.geometry();

    auto* loss = window.loss_plot()->plot();
    auto* memory = window.memory_plot()->plot();
    auto* delta_axis = window.lab_panel()->charts()->delta_rect()->axis(QCPAxis::atLeft);
    auto* code = window.code_panel()->editor(QStringLiteral("py"));
    auto* lesson_text = window.lesson_panel()->text_label();
    auto* title = qobject_cast<QCPTextElement*>(loss->plotLayout()->element(0, 0));
    QVERIFY(title);
    struct Look {
        double window_px, label_px, tick_px, legend_px, title_px, delta_px, code_px, lesson_px, status_px;
        double loss_pen, memory_pen;
    };
    auto status = window.findChild<QLabel*>(QStringLiteral("status_label"));
    QVERIFY(status);
    auto measure = [&] {
        return Look{double(QFontInfo(window.font()).pixelSize()),
                    double(QFontInfo(loss->xAxis->labelFont()).pixelSize()),
                    double(QFontInfo(loss->yAxis->tickLabelFont()).pixelSize()),
                    double(QFontInfo(memory->legend->font()).pixelSize()),
                    double(QFontInfo(title->font()).pixelSize()),
                    double(QFontInfo(delta_axis->tickLabelFont()).pixelSize()),
                    double(QFontInfo(code->font()).pixelSize()),
                    double(QFontInfo(lesson_text->font()).pixelSize()),
                    double(QFontInfo(status->font()).pixelSize()),
                    loss->graph(1)->pen().widthF(), // the optimizer-step loss
                    memory->graph(0)->pen().widthF()}; // current memory
    };
    const Look desk = measure();
    QVERIFY(window.config_area()->isVisible());
    QVERIFY(!window.config_summary()->isVisible());

    window.presentation_action()->trigger(); // View › Presentation (F11)
    QVERIFY(window.presentation_mode());
    QTRY_VERIFY(window.isFullScreen());
    QTRY_COMPARE(window.geometry(), screen->geometry());
    const Look shown = measure();
    const double scale = shown.window_px / desk.window_px;
    qInfo("window text %.0f → %.0f px (×%.2f) on a %d px high screen", desk.window_px, shown.window_px, scale,
          screen->geometry().height());
    QVERIFY(scale >= 1.45); // 1.5 ×, less pixel rounding
    // Legible from the back of the room: text at least 1/40 of the screen's height.
    QVERIFY(shown.window_px >= screen->geometry().height() / 40.0);
    for (const auto& [name, before, after] :
         std::vector<std::tuple<const char*, double, double>>{{"axis label", desk.label_px, shown.label_px},
                                                              {"tick labels", desk.tick_px, shown.tick_px},
                                                              {"legend", desk.legend_px, shown.legend_px},
                                                              {"plot title", desk.title_px, shown.title_px},
                                                              {"|Δ loss| axis", desk.delta_px, shown.delta_px},
                                                              {"code", desk.code_px, shown.code_px},
                                                              {"lesson text", desk.lesson_px, shown.lesson_px},
                                                              {"status", desk.status_px, shown.status_px},
                                                              {"loss line", desk.loss_pen, shown.loss_pen},
                                                              {"memory line", desk.memory_pen, shown.memory_pen}})
        QVERIFY2(after >= 1.45 * before, qPrintable(QStringLiteral("%1: %2 → %3").arg(name).arg(before).arg(after)));
    // The configuration folds to one line that names the experiment.
    QVERIFY(!window.config_area()->isVisible());
    QVERIFY(window.config_summary()->isVisible());
    const auto c = window.config_panel()->config();
    QVERIFY2(window.config_summary()->text().contains(
                 QStringLiteral("%1 × K %2 = %3").arg(c.batch_size).arg(c.accumulation_steps).arg(c.effective_batch())),
             qPrintable(window.config_summary()->text()));

    window.presentation_action()->trigger(); // and back
    QVERIFY(!window.presentation_mode());
    QTRY_VERIFY(!window.isFullScreen());
    QTRY_COMPARE(window.geometry(), desk_geometry);
    const Look back = measure();
    QCOMPARE(back.window_px, desk.window_px);
    QCOMPARE(back.label_px, desk.label_px);
    QCOMPARE(back.tick_px, desk.tick_px);
    QCOMPARE(back.legend_px, desk.legend_px);
    QCOMPARE(back.title_px, desk.title_px);
    QCOMPARE(back.delta_px, desk.delta_px);
    QCOMPARE(back.code_px, desk.code_px);
    QCOMPARE(back.lesson_px, desk.lesson_px);
    QCOMPARE(back.status_px, desk.status_px);
    QCOMPARE(back.loss_pen, desk.loss_pen);
    QCOMPARE(back.memory_pen, desk.memory_pen);
    QVERIFY(window.config_area()->isVisible());
    QVERIFY(!window.config_summary()->isVisible());
}

void TestClassroom::presentationFitsA1024Projector() {
    // The smaller projector, in presentation mode, with the lesson's longest texts and
    // the out-of-memory banner: the window stays the screen's size, nothing runs off.
    auto* screen = screen_of_size(1024, 768);
    MainWindow window;
    window.fit_to_screen(screen);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.set_presentation_mode(true);
    QTRY_COMPARE(window.geometry(), screen->geometry());
    auto* lesson = window.lesson_panel();
    lesson->show();
    window.oom_banner()->show_for(lesson_step1_out_of_memory(), 256, 1);
    for (const auto& step : studio::lesson_steps()) {
        lesson->title_label()->setText(step.title_text());
        lesson->text_label()->setText(step.body_text());
        lesson->verdict_label()->setText(lesson->text_label()->text()); // a verdict of two lines
        for (int tab = 0; tab < window.tabs()->count(); ++tab) {
            window.tabs()->setCurrentIndex(tab);
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            const QSize minimum = window.minimumSizeHint();
            QVERIFY2(minimum.width() <= 1024 && minimum.height() <= 768,
                     qPrintable(QStringLiteral("%1, tab %2: the window needs %3x%4")
                                    .arg(QLatin1String(step.key))
                                    .arg(tab)
                                    .arg(minimum.width())
                                    .arg(minimum.height())));
        }
    }
    QTRY_COMPARE(window.geometry(), screen->geometry());
    window.set_presentation_mode(false);
}

void TestClassroom::lessonStepsAreWellFormed() {
    const auto& steps = studio::lesson_steps();
    QVERIFY(steps.size() >= 7);
    QStringList keys;
    for (const auto& step : steps) {
        QVERIFY2(!keys.contains(QLatin1String(step.key)), step.key);
        keys << QLatin1String(step.key);
        QVERIFY(step.config && step.check);
        QVERIFY(!step.title_text().isEmpty());
        // Two or three sentences.
        const auto sentences = step.body_text().count(QLatin1String(". ")) + 1;
        QVERIFY2(sentences >= 2 && sentences <= 4, step.key);
        const auto problems = accum::validate(step.config());
        QVERIFY2(problems.empty(), qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(step.key),
                                                                          problems.empty() ? QString()
                                                                          : QString::fromStdString(problems[0].to_string()))));
        if (step.run == studio::LessonRun::Experiment)
            for (const auto& planned : studio::plan_experiment(step.experiment, step.config()))
                QVERIFY2(accum::validate(planned.config).empty(), qPrintable(planned.label));
    }
    // The order of the chapter.
    QCOMPARE(keys.mid(0, 5), QStringList({"problem", "mechanism", "proof", "styles", "tokens"}));
    QCOMPARE(studio::lesson_step_index(QStringLiteral("proof")), 2);
    QCOMPARE(studio::lesson_step_index(QStringLiteral("nope")), -1);
}

void TestClassroom::lessonWalksAllSteps() {
    MainWindow window;
    window.fit_to_screen(screen_of_size(1280, 720));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* lesson = window.lesson_panel();
    QSignalSpy finished(lesson, &studio::LessonPanel::step_finished);
    QElapsedTimer clock;
    clock.start();
    window.start_lesson(0);
    QVERIFY(lesson->isVisible());
    const int count = lesson->step_count();
    for (int i = 0; i < count; ++i) {
        const auto& step = studio::lesson_steps()[static_cast<std::size_t>(i)];
        QCOMPARE(lesson->current(), i);
        QVERIFY2(wait_step(finished), step.key);
        QCOMPARE(finished.takeFirst().at(0).toInt(), i);
        qInfo("step %d (%s, %lld ms): %s", i + 1, step.key, clock.restart(), qPrintable(lesson->verdict().text));
        QVERIFY2(lesson->verdict().as_expected, qPrintable(lesson->verdict().text));
        QVERIFY(lesson->verdict_label()->text().contains(lesson->verdict().text));
        const auto& runs = lesson->results();
        const QString key = QLatin1String(step.key);
        if (key == QLatin1String("problem")) {
            // The big batch does not fit under the budget; the window shows the banner.
            QCOMPARE(int(runs.size()), 1);
            QCOMPARE(int(runs[0].summary.status), int(accum::RunStatus::OutOfMemory));
            QVERIFY(window.oom_banner()->isVisible());
            QVERIFY(window.memory_plot()->has_oom_marker());
            QCOMPARE(runs[0].summary.suggested_batch_size * runs[0].summary.suggested_accumulation_steps, 256);
        } else if (key == QLatin1String("mechanism")) {
            QCOMPARE(window.tabs()->currentIndex(), 0);
            QCOMPARE(runs[0].summary.micro_steps, runs[0].config.accumulation_steps * runs[0].summary.optimizer_steps);
            QVERIFY(runs[0].config.micro_step_delay_s > 0); // at teaching pace: the code panel lights lines
            // Long enough to narrate (it was over in 5 s): its micro-batches at
            // the step's pace take 20 s at least, whatever the machine's speed.
            QVERIFY2(runs[0].summary.micro_steps * runs[0].config.micro_step_delay_s >= 20.0,
                     qPrintable(QString::number(runs[0].summary.micro_steps)));
            QVERIFY(runs[0].summary.train_runtime_s >= 20.0);
        } else if (key == QLatin1String("proof")) {
            QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.lab_panel()));
            QCOMPARE(int(runs.size()), 3); // 256 × 1, 64 × 4, 32 × 8
            QVERIFY(studio::max_pairwise_loss_difference(runs) <= 1e-5);
            QVERIFY(runs[1].summary.peak_memory_bytes < runs[0].summary.peak_memory_bytes);
            QVERIFY(runs[2].summary.peak_memory_bytes < runs[1].summary.peak_memory_bytes);
        } else if (key == QLatin1String("styles")) {
            QCOMPARE(int(runs.size()), 3);
            QVERIFY(studio::max_pairwise_loss_difference(runs) <= 1e-5);
        } else if (key == QLatin1String("tokens")) {
            QVERIFY(studio::max_loss_difference(runs[0], runs[1]) >= 1e-2); // mean per micro-batch
            QVERIFY(studio::max_loss_difference(runs[0], runs[2]) <= 1e-5); // token-normalised
        } else if (key == QLatin1String("batchnorm")) {
            QVERIFY(studio::max_loss_difference(runs[0], runs[1]) >= 1e-3);
        } else if (key == QLatin1String("scheduler")) {
            QVERIFY(runs[0].steps.back().learning_rate > 0.0);
            QCOMPARE(runs[1].steps.back().learning_rate, 0.0);
        } else if (key == QLatin1String("loss_scale")) {
            // The right loop skipped a window for overflow, halving S; the plot shows the
            // scales (log axis); the pitfall's losses part from the right ones.
            QVERIFY(std::any_of(runs[0].steps.begin(), runs[0].steps.end(), [](const auto& s) { return s.skipped; }));
            QVERIFY(runs[0].steps.back().loss_scale < runs[0].steps.front().loss_scale);
            QVERIFY(runs[1].config.scaler_per_micro_batch && !runs[0].config.scaler_per_micro_batch);
            QCOMPARE(window.lab_panel()->charts()->plot()->yAxis->scaleType(), QCPAxis::stLogarithmic); // the scale, log
            QVERIFY(studio::max_loss_difference(runs[0], runs[1]) >= 1e-2);
        }
        // Every pitfall and comparison draws its |Δ loss| panel: one curve per run after the first.
        if (step.run == studio::LessonRun::Experiment)
            QCOMPARE(window.lab_panel()->charts()->delta_graph_count(), int(runs.size()) - 1);
        if (i + 1 < count) {
            QVERIFY(lesson->next_button()->isEnabled());
            QTest::mouseClick(lesson->next_button(), Qt::LeftButton);
        } else {
            QVERIFY(!lesson->next_button()->isEnabled());
        }
    }
}

void TestClassroom::lessonRunsAgainAndGoesBack() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* lesson = window.lesson_panel();
    QSignalSpy finished(lesson, &studio::LessonPanel::step_finished);
    const int tokens = studio::lesson_step_index(QStringLiteral("tokens")); // a quick step: 3 runs under a second
    window.start_lesson(tokens);
    QVERIFY(wait_step(finished));
    const double first = studio::max_loss_difference(lesson->results()[0], lesson->results()[1]);
    // Run again: the step's configuration is set again, even after the teacher changed it.
    window.config_panel()->set_batching(2, 8);
    finished.clear();
    QTest::mouseClick(lesson->again_button(), Qt::LeftButton);
    QCOMPARE(lesson->current(), tokens);
    QVERIFY(wait_step(finished));
    QVERIFY(lesson->verdict().as_expected);
    QCOMPARE(window.config_panel()->config().batch_size, 1);
    // The same seed and configuration: the same numbers.
    QCOMPARE(studio::max_loss_difference(lesson->results()[0], lesson->results()[1]), first);
    // Back starts the step before; closing the lesson stops it.
    QTest::mouseClick(lesson->back_button(), Qt::LeftButton);
    QCOMPARE(lesson->current(), tokens - 1);
    QVERIFY(lesson->is_running());
    QTest::mouseClick(lesson->findChild<QPushButton*>(QStringLiteral("lesson_close")), Qt::LeftButton);
    QVERIFY(!lesson->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!window.lab_panel()->is_running(), 20000);
    QVERIFY(!lesson->is_running());
}

void TestClassroom::lessonNextWhileRunningStopsTheStep() {
    MainWindow window;
    window.fit_to_screen(screen_of_size(1280, 720));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* lesson = window.lesson_panel();
    QSignalSpy finished(lesson, &studio::LessonPanel::step_finished);
    const int mechanism = studio::lesson_step_index(QStringLiteral("mechanism"));
    window.start_lesson(mechanism); // at teaching pace: runs for seconds
    QVERIFY(lesson->is_running());
    QTRY_VERIFY_WITH_TIMEOUT(window.loss_plot()->micro_point_count() >= 1, 30000);
    QTest::mouseClick(lesson->next_button(), Qt::LeftButton);
    // The paced run stops at its next micro-batch and the next step runs in its place.
    QVERIFY(wait_step(finished));
    QCOMPARE(finished.first().at(0).toInt(), mechanism + 1);
    QCOMPARE(lesson->current(), mechanism + 1);
    QVERIFY(lesson->verdict().as_expected);
    QCOMPARE(int(window.last_live_run().summary.status), int(accum::RunStatus::Stopped));
}

void TestClassroom::lessonLeavesARunningRunAlone() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    // A run the teacher started by hand, at teaching pace.
    auto c = studio::lesson_steps()[0].config();
    c.memory_budget = "0";
    c.batch_size = 16;
    c.max_steps = 1000;
    c.micro_step_delay_s = 0.05;
    window.config_panel()->set_config(c);
    QSignalSpy run_finished(&window, &MainWindow::run_finished);
    window.run_action()->trigger();
    QVERIFY(window.controller()->is_running());
    QSignalSpy finished(window.lesson_panel(), &studio::LessonPanel::step_finished);
    window.start_lesson(0);
    // The step does not start, says why, and the configuration of the run stays.
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().at(1).toBool(), false);
    QVERIFY2(window.lesson_panel()->verdict().text.contains(QLatin1String("another run")),
             qPrintable(window.lesson_panel()->verdict().text));
    QCOMPARE(window.config_panel()->config().batch_size, 16);
    QVERIFY(window.controller()->is_running());
    window.stop_action()->trigger();
    QVERIFY(run_finished.wait(10000));
}

void TestClassroom::tokenPitfallIsDecadesApart() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy done(&window, &MainWindow::experiment_finished);
    QVERIFY(window.run_demo(QStringLiteral("pitfall-tokens")));
    QVERIFY(done.wait(60000));
    auto* lab = window.lab_panel();
    const auto& runs = lab->results();
    QCOMPARE(int(runs.size()), 3);
    // The setting where the effect is large: one sequence per micro-batch, K = 16.
    QCOMPARE(runs[1].config.batch_size, 1);
    QCOMPARE(runs[1].config.accumulation_steps, 16);
    QCOMPARE(runs[0].config.batch_size, 16);
    QCOMPARE(lab->charts()->delta_graph_count(), 2);
    auto* delta_y = lab->charts()->delta_rect()->axis(QCPAxis::atLeft);
    QCOMPARE(delta_y->scaleType(), QCPAxis::stLogarithmic);
    // The wrong curve (mean per micro-batch) and the right one (token-normalised),
    // as drawn: at least three decades apart (measured: 1e-1 against 1e-7).
    QCPGraph* wrong = nullptr;
    QCPGraph* right = nullptr;
    for (int i = 0; i < lab->charts()->plot()->graphCount(); ++i) {
        auto* g = lab->charts()->plot()->graph(i);
        if (g->valueAxis() != delta_y) continue;
        (wrong ? right : wrong) = g;
    }
    QVERIFY(wrong && right);
    qInfo("|Δ loss| drawn: wrong up to %.2e, right up to %.2e", delta_max(wrong), delta_max(right));
    QVERIFY(delta_max(wrong) >= 1e-2);
    QVERIFY(delta_max(right) <= 1e-5);
    QVERIFY(delta_y->range().contains(delta_max(wrong)) && delta_y->range().contains(delta_max(right)));
    QVERIFY(lab->verdict_label()->text().contains(runs[1].label));
}

void TestClassroom::lessonTranslatedToVietnamese() {
    // The lesson's text is in its file, in each language; the studio's translation
    // says which language the interface speaks.
    QTranslator translator;
    QVERIFY(translator.load(QStringLiteral(ACCUM_TRANSLATIONS_BUILD_DIR "/accum_studio_vi.qm")));
    QCOMPARE(studio::interface_language(), QStringLiteral("en"));
    QVERIFY(QCoreApplication::installTranslator(&translator));
    QCOMPARE(studio::interface_language(), QStringLiteral("vi"));
    for (const auto& step : studio::lesson_steps()) {
        QVERIFY2(!step.title_text().isEmpty() && step.title_text() != step.title.in(QStringLiteral("en")), step.key);
        QVERIFY2(step.body_text().startsWith(step.text.in(QStringLiteral("vi"))) &&
                     step.text.in(QStringLiteral("vi")) != step.text.in(QStringLiteral("en")),
                 step.key);
    }
    // As the translation said it before the text moved into the lesson's file.
    QCOMPARE(studio::lesson_steps()[0].title_text(), QStringLiteral("Vấn đề: một batch lớn không vừa bộ nhớ"));
    QCoreApplication::removeTranslator(&translator);
    QCOMPARE(studio::lesson_steps()[0].title_text(), QStringLiteral("The problem: a big batch does not fit"));
    QVERIFY(!translator.translate("studio::MainWindow", "&Presentation").isEmpty());
    QVERIFY(!translator.translate("studio::LessonPanel", "Run again").isEmpty());
}

int main(int argc, char** argv) {
    // Two screens for the offscreen platform: the primary 1024 × 768, a 1280 × 720 beside it.
    QTemporaryDir dir;
    if (!test_screens::use_offscreen_screens(dir.filePath(QStringLiteral("screens.json")),
                                             {{"projector-1024", {1024, 768}}, {"projector-1280", {1280, 720}}}))
        return 1;
    QApplication app(argc, argv);
    TestClassroom test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_classroom.moc"
// SPDX-License-Identifier: GPL-3.0-or-later
