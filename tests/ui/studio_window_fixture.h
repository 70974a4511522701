// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The studio's MainWindow shown offscreen for a test, with the form's fields
// found by name and a tiny run to its end: what test_studio_window and
// test_config_form share. A test class derives from QObject and this.

#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <memory>

#include "accum/records.h"
#include "isolated_settings.h"
#include "main_window.h"

using studio::MainWindow;

class StudioWindowFixture {
protected:
    template <typename T>
    T* child(const char* name) {
        auto* w = window_->findChild<T*>(QString::fromLatin1(name));
        if (!w) qFatal("no child %s", name);
        return w;
    }
    void set_spin(const char* name, int value) { child<QSpinBox>(name)->setValue(value); }
    void set_combo(const char* name, const QString& data) {
        auto* combo = child<QComboBox>(name);
        combo->setCurrentIndex(combo->findData(data));
    }
    // fashion-mnist, mlp, max_steps steps, evaluation at the end.
    void configure_tiny_run(int batch, int k, int max_steps);
    // Runs the configured experiment to its end. False (with a test failure's
    // message in the log) when it does not end within the timeout: a wait that
    // times out never reads as a completed run.
    [[nodiscard]] bool run_to_end(accum::SummaryRecord& summary, int timeout_ms = 60000);
    // Delivers what a change left pending (window-system geometry, posted
    // layout requests), as the event loop would, without waiting for anything:
    // the geometry read next is the settled layout's. Several passes, as a
    // layout that changes posts a request to its parent's.
    static void lay_out_pending() {
        for (int pass = 0; pass < 10; ++pass) {
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            QCoreApplication::processEvents();
        }
    }

    // The test class's initTestCase, init and cleanup: the settings in a
    // folder of the test's own, a new window shown for each test.
    void isolate_test_settings() {
        QVERIFY(settings_dir_.isValid());
        isolate_settings(settings_dir_.path());
    }
    void show_new_window() {
        window_ = std::make_unique<MainWindow>();
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    }
    void close_window() { window_.reset(); } // the destructor stops any run and waits for the engine thread

    QTemporaryDir settings_dir_;
    std::unique_ptr<MainWindow> window_;
};

inline void StudioWindowFixture::configure_tiny_run(int batch, int k, int max_steps) {
    set_combo("dataset", QStringLiteral("fashion-mnist"));
    set_combo("model", QStringLiteral("mlp"));
    set_combo("mode", QStringLiteral("pytorch"));
    set_spin("batch_size", batch);
    set_spin("accumulation_steps", k);
    set_spin("max_steps", max_steps);
    set_spin("epochs", 0);
    child<QLineEdit>("memory_budget")->setText(QStringLiteral("0"));
    set_spin("pace_ms", 0);
}

inline bool StudioWindowFixture::run_to_end(accum::SummaryRecord& summary, int timeout_ms) {
    QSignalSpy finished(window_.get(), &MainWindow::run_finished);
    window_->run_action()->trigger();
    if (!finished.wait(timeout_ms)) {
        qWarning("run did not finish in %d ms", timeout_ms);
        return false;
    }
    summary = finished.takeFirst().at(0).value<accum::SummaryRecord>();
    return true;
}
