// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow, what it reads and writes: configurations (File › Open and Save),
// the plots and data exported, and the window's settings kept between sessions.
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
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        if (error) *error = file.errorString();
        return false;
    }
    // Where the studio saves runs is its setting, not the experiment's: in
    // accum-run --config, output-dir would be the run's own directory.
    auto config = config_panel_->config();
    config.output_dir.clear();
    file.write(QByteArray::fromStdString(accum::to_json_text(config)));
    return true;
}

bool MainWindow::load_config(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        if (error) *error = file.errorString();
        return false;
    }
    std::vector<accum::ConfigProblem> problems;
    const auto config = accum::from_json_text(file.readAll().toStdString(), accum::RunConfig{}, problems);
    if (!problems.empty()) {
        QStringList lines;
        for (const auto& p : problems) lines << QString::fromStdString(p.to_string());
        if (error) *error = lines.join(QLatin1Char('\n'));
        return false;
    }
    config_panel_->set_config(config);
    return true;
}

bool MainWindow::export_csv(const QString& loss_path, const QString& memory_path) const {
    QFile loss(loss_path), memory(memory_path);
    if (!loss.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
    if (!memory.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
    QTextStream loss_out(&loss), memory_out(&memory);
    loss_plot_->write_csv(loss_out);
    memory_plot_->write_csv(memory_out);
    return true;
}

void MainWindow::save_config_dialog() {
    const auto path = QFileDialog::getSaveFileName(this, tr("Save configuration"), QStringLiteral("config.json"),
                                                   tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!save_config(path, &error)) QMessageBox::warning(this, tr("Save configuration"), error);
}

void MainWindow::load_config_dialog() {
    const auto path = QFileDialog::getOpenFileName(this, tr("Open configuration"), QString(), tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!load_config(path, &error)) QMessageBox::warning(this, tr("Open configuration"), error);
}

void MainWindow::open_lesson_dialog() {
    // The shipped lessons' folder (installed, else the build tree's copy): a
    // teacher's own lessons start as copies of these.
    const auto path = QFileDialog::getOpenFileName(this, tr("Open lesson"),
                                                   lessons_directory(QCoreApplication::applicationDirPath()),
                                                   tr("Lesson (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!open_lesson(path, &error)) QMessageBox::warning(this, tr("Open lesson"), error);
}

bool MainWindow::open_lesson(const QString& path, QString* error) {
    auto lesson = read_lesson_file(path, error);
    if (!lesson) return false;
    lesson_panel_->set_lesson(std::make_shared<const Lesson>(std::move(*lesson)));
    start_lesson(0);
    return true;
}

void MainWindow::export_plot_dialog(bool loss) {
    const auto path = QFileDialog::getSaveFileName(this, loss ? tr("Export loss plot") : tr("Export memory plot"),
                                                   loss ? QStringLiteral("loss.png") : QStringLiteral("memory.png"),
                                                   tr("PNG image (*.png);;PDF (*.pdf)"));
    if (path.isEmpty()) return;
    const bool ok = loss ? loss_plot_->save_image(path) : memory_plot_->save_image(path);
    if (!ok) QMessageBox::warning(this, tr("Export"), tr("Could not write %1").arg(path));
}

void MainWindow::export_csv_dialog() {
    const auto path = QFileDialog::getSaveFileName(this, tr("Export data (CSV)"), QStringLiteral("loss.csv"),
                                                   tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    const QFileInfo info(path);
    const auto memory_path = info.dir().filePath(info.completeBaseName() + QStringLiteral("-memory.csv"));
    if (!export_csv(path, memory_path))
        QMessageBox::warning(this, tr("Export"), tr("Could not write %1").arg(path));
    else
        statusBar()->showMessage(tr("Wrote %1 and %2").arg(path, memory_path), 5000);
}

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
    refresh_timer_.stop();
    controller_->shutdown();
    lab_panel_->queue()->controller()->shutdown();
    store_settings();
    event->accept();
}


} // namespace studio
