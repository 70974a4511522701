// SPDX-License-Identifier: GPL-3.0-or-later
// The studio trains a .pt2 package (a training step compiled by AOTInductor,
// examples/accum_pt2.py) chosen as its own model: the file dialog offers
// packages, the form takes one, a real run trains and evaluates it in the
// studio's process, and the code panel says what the loop calls. The package
// and its data come from the test models.pt2_files (its fixture); without them
// (a 1.13 build, no torch 2.x environment) the run is skipped, saying so.
// ACCUM_SCREENSHOT_DIR, when set, receives the window after the run (for a look
// under Xvfb: xvfb-run -a with QT_QPA_PLATFORM=xcb).

#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <memory>
#include <utility>

#include "accum/run_config.h"
#include "accum/session.h"
#include "config_panel.h"
#include "isolated_settings.h"
#include "loss_plot.h"
#include "main_window.h"
#include "memory_plot.h"

class TestOwnPackage : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void fileDialogOffersPackages();
    void studioTrainsAPackage();

private:
    // Sets the form's field `name` (a combo box by its item's data, a spin box, a line edit).
    bool set_field(const char* name, const QVariant& value) {
        auto* field = window_->findChild<QWidget*>(QString::fromLatin1(name));
        if (auto* combo = qobject_cast<QComboBox*>(field)) {
            combo->setCurrentIndex(combo->findData(value));
            return combo->currentData() == value;
        }
        if (auto* spin = qobject_cast<QSpinBox*>(field)) {
            spin->setValue(value.toInt());
            return spin->value() == value.toInt();
        }
        if (auto* edit = qobject_cast<QLineEdit*>(field)) {
            edit->setText(value.toString());
            return true;
        }
        return false;
    }

    QTemporaryDir settings_dir_;
    std::unique_ptr<studio::MainWindow> window_;
};

void TestOwnPackage::initTestCase() {
    QVERIFY(settings_dir_.isValid());
    isolate_settings(settings_dir_.path());
}

void TestOwnPackage::cleanup() { window_.reset(); }

void TestOwnPackage::fileDialogOffersPackages() {
    // The first filter, the one the dialog opens with, shows both kinds of model file.
    const auto first = studio::ConfigPanel::model_file_filter().section(QStringLiteral(";;"), 0, 0);
    QVERIFY2(first.contains(QStringLiteral("*.pt2")) && first.contains(QStringLiteral("*.pt ")), qPrintable(first));
}

void TestOwnPackage::studioTrainsAPackage() {
    const QString dir = QStringLiteral(ACCUM_PT2_FILES_DIR);
    const QString package = dir + QStringLiteral("/mlp.pt2");
    const QString data = dir + QStringLiteral("/mlp_data.pt");
    if (!QFileInfo::exists(package) || !QFileInfo::exists(data))
        QSKIP(qPrintable(QStringLiteral("no %1: the test models.pt2_files writes it (LibTorch 2.x build, torch 2.x "
                                        "environment)")
                             .arg(package)));
    window_ = std::make_unique<studio::MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    const std::pair<const char*, QVariant> fields[] = {
        {"dataset", QStringLiteral("tensors")}, {"data_path", data},   {"model", QStringLiteral("file")},
        {"model_file", package},                {"mode", QStringLiteral("pytorch")}, {"batch_size", 8},
        {"accumulation_steps", 2},              {"max_steps", 6},      {"epochs", 0},
        {"pace_ms", 0},                         {"memory_budget", QStringLiteral("0")}};
    for (const auto& [name, value] : fields) QVERIFY2(set_field(name, value), name);
    QVERIFY2(window_->config_panel()->is_valid(), qPrintable(window_->config_panel()->problems_text()));
    const auto c = window_->config_panel()->config();
    QCOMPARE(c.model, accum::ModelKind::File);
    QCOMPARE(QString::fromStdString(c.model_file), package);
    // The form's memory estimate knows the format: the gradients the compiled step returns.
    auto* panel = window_->config_panel();
    QTRY_VERIFY_WITH_TIMEOUT(panel->estimate().ok && panel->estimate().batch_size == 8, 60000);
    QCOMPARE(panel->estimate().returned_gradient_bytes, panel->estimate().gradients_bytes);
    QVERIFY(panel->estimate().gradients_bytes > 0);

    QSignalSpy finished(window_.get(), &studio::MainWindow::run_finished);
    window_->run_action()->trigger();
    QVERIFY2(finished.wait(120000), "the run of the package did not end within 120 s");
    const auto summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    QVERIFY2(summary.status == accum::RunStatus::Completed, summary.message.c_str());
    QCOMPARE(summary.optimizer_steps, 6);
    QVERIFY(std::isfinite(summary.final_loss));
    QTRY_COMPARE(window_->loss_plot()->step_point_count(), 6);
    QCOMPARE(window_->loss_plot()->micro_point_count(), 12); // 6 steps × K = 2
    QVERIFY(window_->loss_plot()->eval_point_count() >= 1);   // the package's eval graph
    QVERIFY(window_->memory_plot()->point_count() >= 1);
    // The code panel names the compiled step, not torch.jit.load.
    const auto* model_line = window_->findChild<QLabel*>(QStringLiteral("code_model_line"));
    QVERIFY(model_line);
    const auto line = model_line->text();
    QVERIFY2(line.contains(QStringLiteral("mlp.pt2")) && !line.contains(QStringLiteral("torch.jit")), qPrintable(line));

    const auto shots = qEnvironmentVariable("ACCUM_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
        window_->resize(1280, 720);
        for (int pass = 0; pass < 10; ++pass) { // the resized layout settled, as the event loop would
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            QCoreApplication::processEvents();
        }
        QVERIFY(window_->grab().save(shots + QStringLiteral("/studio_pt2.png")));
    }
}

QTEST_MAIN(TestOwnPackage)
#include "test_own_package.moc"
