// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow, what it reads and writes: the window's settings kept between
// sessions, and what the file actions (file_actions.h: File › Open and Save,
// Open lesson, the plots and data exported) ask of it.
#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontInfo>
#include <QFontMetrics>
#include <QScreen>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QPushButton>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextStream>
#include <QToolBar>
#include <QVBoxLayout>
#include <QWindow>
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "code_panel.h"
#include "config_panel.h"
#include "engine_text.h"
#include "lab_panel.h"
#include "language.h"
#include "lesson_panel.h"
#include "plot_look.h"
#include "screen_fit.h"
#include "runs_panel.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "oom_banner.h"
#include "run_controller.h"

namespace studio {

namespace {

QSettings studio_settings() { return QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")); }

} // namespace

bool MainWindow::save_config(const QString& path, QString* error) const {
    return file_actions_->save_config(path, error);
}

bool MainWindow::load_config(const QString& path, QString* error) { return file_actions_->load_config(path, error); }

bool MainWindow::export_csv(const QString& loss_path, const QString& memory_path) const {
    return file_actions_->export_csv(loss_path, memory_path);
}

bool MainWindow::open_lesson(const QString& path, QString* error) { return file_actions_->open_lesson(path, error); }

void MainWindow::start_lesson_file(std::shared_ptr<const Lesson> lesson) {
    lesson_panel_->set_lesson(std::move(lesson));
    start_lesson(0);
}

bool MainWindow::write_plot_image(bool loss, const QString& path) const {
    return loss ? loss_plot_->save_image(path) : memory_plot_->save_image(path);
}

void MainWindow::write_plot_csv(bool loss, QTextStream& out) const {
    if (loss)
        loss_plot_->write_csv(out);
    else
        memory_plot_->write_csv(out);
}

void MainWindow::show_warning(const QString& title, const QString& text) { QMessageBox::warning(this, title, text); }

void MainWindow::show_message(const QString& text, int timeout_ms) { statusBar()->showMessage(text, timeout_ms); }

void MainWindow::restore_settings() {
    auto settings = studio_settings();
    const auto json = settings.value(QStringLiteral("last_config")).toString();
    if (!json.isEmpty()) {
        std::vector<accum::ConfigProblem> problems;
        const auto config = accum::from_json_text(json.toStdString(), accum::RunConfig{}, problems);
        if (problems.empty()) config_panel_->set_config(config);
    }
}

void MainWindow::fit_to_screen(QScreen* target) {
    if (!target) target = QGuiApplication::primaryScreen();
    if (!target) return;
    const QRect available = target->availableGeometry();
    // The frame around the contents: known once the window is shown, else a title
    // bar and thin borders as most window managers draw them.
    QMargins frame(8, 32, 8, 8);
    if (windowHandle() && isVisible()) frame = windowHandle()->frameMargins();
    const QSize frame_extra(frame.left() + frame.right(), frame.top() + frame.bottom());
    const auto saved = studio_settings().value(QStringLiteral("geometry")).toByteArray();
    if (!saved.isEmpty() && restoreGeometry(saved)) {
        if (isMaximized() || isFullScreen()) return;
        // Saved on a larger screen, or beside this one: moved and shrunk into it.
        const QRect outer = clamp_to_screen(QRect(pos(), size() + frame_extra), available);
        resize(outer.size() - frame_extra);
        move(outer.topLeft());
        return;
    }
    const QSize size = first_window_size(available.size(), minimumSizeHint(), frame_extra);
    resize(size);
    move(available.left() + (available.width() - size.width() - frame_extra.width()) / 2,
         available.top() + (available.height() - size.height() - frame_extra.height()) / 2);
}

void MainWindow::store_settings() {
    auto settings = studio_settings();
    // During the lesson, the configuration the user had before it: the lesson's own
    // never becomes the next start's.
    const auto& mine = director_->user_config();
    const auto config = mine ? *mine : config_panel_->config();
    settings.setValue(QStringLiteral("last_config"), QString::fromStdString(accum::to_json_text(config)));
    // In presentation mode, the desk geometry the window returns to.
    settings.setValue(QStringLiteral("geometry"), presentation_ ? desk_geometry_ : saveGeometry());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    // Stop the run (the engine writes what it has when an output dir is set)
    // and wait for the engine thread before the window goes away.
    live_view_->stop_refresh();
    controller_->shutdown();
    lab_panel_->queue()->controller()->shutdown();
    store_settings();
    event->accept();
}


} // namespace studio
