// SPDX-License-Identifier: GPL-3.0-or-later
// The studio's configuration form in the real MainWindow, offscreen: its
// defaults, a value refused at its field, saved and remembered configurations,
// the lesson and demos that leave the user's own alone, reset and undo.

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

class TestConfigForm : public QObject, protected StudioWindowFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void defaultConfiguration();
    void invalidValueDisablesRun();
    void configSaveLoadRoundTrip();
    void settingsRememberLastConfig();
    void errorsAtTheField();
    void outOfRangeIsExplainedNotReverted();
    void panelDoesNotScrollWhileTyping();
    void lessonAndDemoKeepTheUsersSettings();
    void resetToDefaultsAndUndo();
};

void TestConfigForm::initTestCase() { isolate_test_settings(); }
void TestConfigForm::init() { show_new_window(); }
void TestConfigForm::cleanup() { close_window(); }

void TestConfigForm::defaultConfiguration() {
    const auto c = window_->config_panel()->config();
    QCOMPARE(c.dataset, accum::DatasetKind::FashionMnist);
    QCOMPARE(c.model, accum::ModelKind::Mlp);
    QCOMPARE(c.batch_size, 64);
    QCOMPARE(c.accumulation_steps, 4);
    QCOMPARE(c.epochs, 3);
    QCOMPARE(c.learning_rate, 0.05);
    QCOMPARE(c.optimizer, accum::OptimizerKind::Sgd);
    // Runs are saved in the data directory (here under the temporary HOME) unless asked not to.
    QCOMPARE(QString::fromStdString(c.output_dir), studio::default_runs_folder());
    QVERIFY(QString::fromStdString(c.output_dir).startsWith(settings_dir_.path()));
    QVERIFY(child<QLabel>("effective_batch")->text().contains(QStringLiteral("256")));
    QVERIFY(window_->run_action()->isEnabled());
    QVERIFY(!window_->stop_action()->isEnabled());
    // Before any run the accumulation meter shows the form's K (0 / 4), and follows it.
    QCOMPARE(child<studio::AccumulationMeter>("accumulation_meter")->window_size(), 4);
    set_spin("batch_size", 32);
    set_spin("accumulation_steps", 8);
    QVERIFY(child<QLabel>("effective_batch")->text().contains(QStringLiteral("32 × 8 = 256")));
    QCOMPARE(child<studio::AccumulationMeter>("accumulation_meter")->window_size(), 8);
    // Model › from file…: the file's row shows, and without a file the run is refused, naming --model.
    QVERIFY(child<QWidget>("model_file_row")->isHidden());
    auto* model = child<QComboBox>("model");
    model->setCurrentIndex(model->findData(QStringLiteral("file")));
    QVERIFY(!child<QWidget>("model_file_row")->isHidden());
    QVERIFY(!window_->config_panel()->is_valid());
    // In the form's words: the field's label, not the command line's --model.
    QVERIFY2(window_->config_panel()->problems_text().startsWith(QStringLiteral("Model: ")),
             qPrintable(window_->config_panel()->problems_text()));
    QVERIFY(!window_->config_panel()->problems_text().contains(QStringLiteral("--")));
    child<QLineEdit>("model_file")->setText(QStringLiteral("examples/cnn.pt"));
    QVERIFY(window_->config_panel()->is_valid());
    const auto file = window_->config_panel()->config();
    QCOMPARE(file.model, accum::ModelKind::File);
    QCOMPARE(file.model_file, std::string("examples/cnn.pt"));
    model->setCurrentIndex(model->findData(QStringLiteral("mlp")));
    QVERIFY(window_->config_panel()->config().model_file.empty());
}

void TestConfigForm::invalidValueDisablesRun() {
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("lots"));
    QVERIFY(!window_->config_panel()->is_valid());
    QVERIFY(!window_->run_action()->isEnabled());
    QVERIFY(window_->config_panel()->problems_text().startsWith(QStringLiteral("Memory budget: ")));
    QVERIFY(child<QLabel>("memory_budget_error")->isVisible());
    QVERIFY(child<QLabel>("memory_budget_error")->text().contains(QStringLiteral("lots")));
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("512MiB"));
    QVERIFY(window_->config_panel()->is_valid());
    QVERIFY(!child<QLabel>("memory_budget_error")->isVisible());
    QVERIFY(!window_->config_problems()->isVisible());
    QVERIFY(window_->run_action()->isEnabled());
}

void TestConfigForm::configSaveLoadRoundTrip() {
    configure_tiny_run(48, 3, 123);
    set_combo("mode", QStringLiteral("trainer"));
    set_combo("optimizer", QStringLiteral("adamw"));
    set_combo("scheduler", QStringLiteral("cosine"));
    set_spin("seed", 7);
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("256MiB"));
    const auto saved = window_->config_panel()->config();
    QTemporaryDir dir;
    const auto path = dir.filePath("config.json");
    QString error;
    QVERIFY2(window_->save_config(path, &error), qPrintable(error));

    window_->config_panel()->set_config(accum::RunConfig{});
    QCOMPARE(window_->config_panel()->config().batch_size, 64);
    QVERIFY2(window_->load_config(path, &error), qPrintable(error));
    const auto loaded = window_->config_panel()->config();
    QCOMPARE(accum::to_json_text(loaded), accum::to_json_text(saved));
    QCOMPARE(loaded.batch_size, 48);
    QCOMPARE(loaded.mode, accum::Mode::Trainer);
    // The file is what accum-run --config reads.
    std::vector<accum::ConfigProblem> problems;
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto parsed = accum::from_json_text(file.readAll().toStdString(), accum::RunConfig{}, problems);
    QVERIFY(problems.empty());
    QCOMPARE(parsed.max_steps, 123);
}

void TestConfigForm::settingsRememberLastConfig() {
    set_spin("batch_size", 40);
    set_spin("accumulation_steps", 5);
    window_->close(); // stores the configuration
    window_ = std::make_unique<MainWindow>();
    QCOMPARE(window_->config_panel()->config().batch_size, 40);
    QCOMPARE(window_->config_panel()->config().accumulation_steps, 5);
    QVERIFY(QFile::exists(settings_dir_.filePath("AccumulateStudio/accum-studio.conf")));
    // Reset for the tests that follow.
    window_->config_panel()->set_config(accum::RunConfig{});
    window_->close();
}

// An invalid value is explained under its field, in the form's
// words (its label, not the command line's --lr), and in a line below the form
// that is in view whatever the form shows; each problem there leads to its field.
void TestConfigForm::errorsAtTheField() {
    window_->resize(1280, 720);
    QTRY_COMPARE(window_->size(), QSize(1280, 720));
    lay_out_pending();
    auto* lr = child<QDoubleSpinBox>("learning_rate");
    lr->setValue(0.0);
    QVERIFY(!window_->config_panel()->is_valid());
    QVERIFY(!window_->run_action()->isEnabled());
    auto* error = child<QLabel>("learning_rate_error");
    QVERIFY(error->isVisible());
    QCOMPARE(error->text(), QStringLiteral("must be above 0"));
    QCOMPARE(window_->config_panel()->problems_text(), QStringLiteral("Learning rate: must be above 0"));
    QVERIFY(!window_->config_panel()->problems_text().contains(QStringLiteral("--")));
    // The error is just under its field.
    const QPoint field_bottom = lr->mapTo(window_->config_panel(), QPoint(0, lr->height()));
    const QPoint error_top = error->mapTo(window_->config_panel(), QPoint(0, 0));
    QVERIFY2(error_top.y() >= field_bottom.y() && error_top.y() - field_bottom.y() < 20,
             qPrintable(QStringLiteral("%1 %2").arg(field_bottom.y()).arg(error_top.y())));
    // The line below the form: inside the window at 1280 × 720, not scrolled away,
    // its whole text in its height.
    auto* line = window_->config_problems();
    QVERIFY(line->isVisible());
    QVERIFY(line->text().contains(QStringLiteral("Learning rate: must be above 0")));
    const QRect in_window(line->mapTo(window_.get(), QPoint(0, 0)), line->size());
    QVERIFY2(window_->rect().contains(in_window), qPrintable(QStringLiteral("%1,%2 %3×%4")
                                                                 .arg(in_window.x())
                                                                 .arg(in_window.y())
                                                                 .arg(in_window.width())
                                                                 .arg(in_window.height())));
    QVERIFY(line->heightForWidth(line->width()) <= line->height());
    // Its link brings the field into view: the memory budget, at the form's end.
    lr->setValue(0.05);
    window_->config_area()->verticalScrollBar()->setValue(0);
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("lots"));
    QCOMPARE(window_->config_panel()->problems().size(), 1);
    QMetaObject::invokeMethod(line, "linkActivated", Q_ARG(QString, QStringLiteral("0")));
    auto* budget = child<QLineEdit>("memory_budget");
    const QRect viewport = window_->config_area()->viewport()->rect();
    QVERIFY(viewport.contains(QRect(budget->mapTo(window_->config_area()->viewport(), QPoint(0, 0)), budget->size())));
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("0"));
    QVERIFY(!line->isVisible());
}

// A value out of range stays as typed and is explained, while typing: 0 (below the
// range) and 999999 (more than Fashion-MNIST's 60000 training samples, which only
// the engine found, at Run).
void TestConfigForm::outOfRangeIsExplainedNotReverted() {
    auto* batch = child<QSpinBox>("batch_size");
    auto* error = child<QLabel>("batch_size_error");
    batch->setFocus();
    batch->selectAll();
    QTest::keyClicks(batch, QStringLiteral("0"));
    QCOMPARE(batch->value(), 0);
    QVERIFY(error->isVisible());
    QVERIFY2(error->text().contains(QStringLiteral("at least 1")), qPrintable(error->text()));
    child<QSpinBox>("accumulation_steps")->setFocus(); // leaving the field keeps the 0
    QCOMPARE(batch->value(), 0);
    QCOMPARE(batch->text(), QStringLiteral("0"));
    QVERIFY(!window_->run_action()->isEnabled());
    batch->setFocus();
    batch->selectAll();
    QTest::keyClicks(batch, QStringLiteral("9999"));
    QVERIFY(window_->config_panel()->is_valid()); // 9999 ≤ 60000
    QTest::keyClicks(batch, QStringLiteral("99"));
    QCOMPARE(batch->value(), 999999);
    QVERIFY(!window_->config_panel()->is_valid());
    // 60000: kFashionMnistTrainSize, the engine's own count (accum-run says the same at start).
    QVERIFY2(error->text().contains(QStringLiteral("60000")), qPrintable(error->text()));
    QVERIFY(!window_->run_action()->isEnabled());
    // Too many accumulation steps for validate() (at most 100000): typed, not refused key by key.
    auto* k = child<QSpinBox>("accumulation_steps");
    k->setFocus();
    k->selectAll();
    QTest::keyClicks(k, QStringLiteral("200000"));
    QCOMPARE(k->value(), 200000);
    QVERIFY(child<QLabel>("accumulation_steps_error")->text().contains(QStringLiteral("100000")));
    set_spin("batch_size", 64);
    set_spin("accumulation_steps", 4);
    QVERIFY(window_->config_panel()->is_valid());
}

// Typing in the form's last fields, scrolled to its end at 1280 × 720: nothing
// moves while the memory estimate is computed again at each keystroke (its
// one-line "estimating…" between two longer estimates moved the whole form).
void TestConfigForm::panelDoesNotScrollWhileTyping() {
    window_->resize(1280, 720);
    configure_tiny_run(64, 4, 10);
    QTRY_VERIFY_WITH_TIMEOUT(window_->config_panel()->estimate().ok, 20000);
    auto* bar = window_->config_area()->verticalScrollBar();
    QTRY_VERIFY(bar->maximum() > 0);
    bar->setValue(bar->maximum());
    auto* budget = child<QLineEdit>("memory_budget");
    auto* viewport = window_->config_area()->viewport();
    const QPoint where = budget->mapTo(viewport, QPoint(0, 0));
    budget->setFocus();
    budget->selectAll();
    // "4" is a budget of 4 bytes: the estimate says "over the budget" and takes a
    // line more, above the field; "40M" is no size: an error row under it.
    for (const QString& keys : {QStringLiteral("4"), QStringLiteral("0"), QStringLiteral("M"), QStringLiteral("iB")}) {
        QTest::keyClicks(budget, keys);
        lay_out_pending();
        QCOMPARE(budget->mapTo(viewport, QPoint(0, 0)), where);
        // The estimator waits a moment after the last change, then estimates.
        QTRY_VERIFY_WITH_TIMEOUT(!window_->config_panel()->estimator()->is_pending(), 20000);
        lay_out_pending();
        QCOMPARE(budget->mapTo(viewport, QPoint(0, 0)), where);
    }
    QCOMPARE(window_->config_panel()->config().memory_budget, std::string("40MiB"));
}

// A lesson step and a demo run on their own configurations and
// never write the user's saved one; leaving the lesson gives the form back; the
// next start gets the user's settings.
void TestConfigForm::lessonAndDemoKeepTheUsersSettings() {
    const auto saved_batch = [] {
        const auto json = QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio"))
                              .value(QStringLiteral("last_config"))
                              .toString();
        std::vector<accum::ConfigProblem> problems;
        return accum::from_json_text(json.toStdString(), accum::RunConfig{}, problems).batch_size;
    };
    set_spin("batch_size", 40);
    set_spin("accumulation_steps", 5);
    child<QDoubleSpinBox>("learning_rate")->setValue(0.03);
    window_->close(); // stores the configuration
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QCOMPARE(saved_batch(), 40);

    // A quick step of the lesson (tokens: the transformer at 1 × 16, 20 updates, lr 0.1).
    const int tokens = studio::lesson_step_index(QStringLiteral("tokens"));
    QSignalSpy step(window_->lesson_panel(), &studio::LessonPanel::step_finished);
    window_->start_lesson(tokens);
    QVERIFY(step.wait(60000));
    QCOMPARE(window_->config_panel()->config().batch_size, 1); // the form shows the step's
    QCOMPARE(saved_batch(), 40);                                  // the saved settings keep the user's
    QVERIFY(window_->user_config().has_value());

    // The no_sync demo after it, as --demo no-sync starts it (app/accum_studio_main.cpp):
    // on its own configuration, the defaults, not the lesson's transformer at 1 × 16
    // and lr 0.1, nor the form's.
    QSignalSpy experiment(window_.get(), &MainWindow::experiment_finished);
    QVERIFY(window_->run_demo(QStringLiteral("no-sync"), accum::RunConfig{}));
    QVERIFY(experiment.wait(120000));
    const auto& runs = window_->lab_panel()->results();
    QCOMPARE(int(runs.size()), 2);
    const accum::RunConfig defaults;
    for (const auto& r : runs) {
        QCOMPARE(r.config.model, defaults.model);
        QCOMPARE(r.config.batch_size, defaults.batch_size);
        QCOMPARE(r.config.accumulation_steps, defaults.accumulation_steps);
        QCOMPARE(r.config.learning_rate, defaults.learning_rate);
        QCOMPARE(r.config.micro_step_delay_s, 0.0);
        QCOMPARE(r.config.max_steps, 30); // the lab's length for no_sync (lab_panel.cpp)
        QCOMPARE(r.summary.optimizer_steps, 30);
    }
    QCOMPARE(window_->config_panel()->config().batch_size, 1); // the demo left the form alone
    QCOMPARE(saved_batch(), 40);

    // Leaving the lesson gives the form back what the user had.
    QTest::mouseClick(window_->lesson_panel()->findChild<QPushButton*>(QStringLiteral("lesson_close")), Qt::LeftButton);
    QCOMPARE(window_->config_panel()->config().batch_size, 40);
    QCOMPARE(window_->config_panel()->config().accumulation_steps, 5);
    QCOMPARE(window_->config_panel()->config().learning_rate, 0.03);
    QVERIFY(!window_->user_config().has_value());

    // Closed mid-lesson, the window saves the user's; a plain start gets them.
    window_->start_lesson(tokens);
    QVERIFY(step.wait(60000));
    QCOMPARE(window_->config_panel()->config().batch_size, 1);
    window_->close();
    QCOMPARE(saved_batch(), 40);
    window_ = std::make_unique<MainWindow>();
    QCOMPARE(window_->config_panel()->config().batch_size, 40);
    QCOMPARE(window_->config_panel()->config().accumulation_steps, 5);
    QCOMPARE(window_->config_panel()->config().model, accum::ModelKind::Mlp);
    QCOMPARE(window_->config_panel()->config().memory_budget, std::string("0"));
    // Reset for the tests that follow.
    window_->config_panel()->set_config(accum::RunConfig{});
    window_->close();
}

// Settings › Reset to defaults: the defaults at once, saved; Undo brings back what was there.
void TestConfigForm::resetToDefaultsAndUndo() {
    set_spin("batch_size", 40);
    set_combo("optimizer", QStringLiteral("adamw"));
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("40MiB"));
    const auto before = accum::to_json_text(window_->config_panel()->config());
    // Where runs are saved is a setting of the studio's, not of the experiment: kept.
    auto defaults = accum::RunConfig{};
    defaults.output_dir = window_->config_panel()->config().output_dir;
    QVERIFY(!window_->undo_reset_button()->isVisible());
    window_->reset_defaults_action()->trigger();
    QCOMPARE(accum::to_json_text(window_->config_panel()->config()), accum::to_json_text(defaults));
    QVERIFY(window_->undo_reset_button()->isVisible());
    const auto saved = QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio"))
                           .value(QStringLiteral("last_config"))
                           .toString()
                           .toStdString();
    QCOMPARE(saved, accum::to_json_text(defaults));
    QTest::mouseClick(window_->undo_reset_button(), Qt::LeftButton);
    QCOMPARE(accum::to_json_text(window_->config_panel()->config()), before);
    QVERIFY(!window_->undo_reset_button()->isVisible());
    window_->config_panel()->set_config(accum::RunConfig{});
}

QTEST_MAIN(TestConfigForm)
#include "test_config_form.moc"
