// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow, its runs: what the run director (run_director.h, which decides who
// holds the engine and what starts) asks of the window — the live run's views
// cleared and its start, the lab's tab, the form — and the live run's pause,
// stop and single step. The window's layout is in main_window.cpp.
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
#include "noise_plot.h"
#include "oom_banner.h"
#include "run_controller.h"

namespace studio {

bool MainWindow::start_run() { return director_->start_run(); }

accum::RunConfig MainWindow::form_config() const { return config_panel_->config(); }
void MainWindow::set_form_config(const accum::RunConfig& config) { config_panel_->set_config(config); }
bool MainWindow::form_valid() const { return config_panel_->is_valid(); }
QString MainWindow::form_problems() const {
    return config_panel_->problems_text().replace(QLatin1Char('\n'), QStringLiteral("; "));
}

void MainWindow::start_live_run(const accum::RunConfig& config, const QString& label) {
    live_view_->start(config, label); // the views and the code panel set for it, the refresh timer started
    oom_banner_->hide();
    controller_->start(config);
    update_actions();
}

void MainWindow::toggle_pause() {
    if (!controller_->is_running()) return;
    if (controller_->is_paused())
        controller_->resume();
    else
        controller_->pause();
    update_actions();
}

void MainWindow::stop_run() {
    if (!controller_->is_running()) return;
    controller_->stop(); // thread-safe (the run's stop token); takes effect at the next micro-batch
    set_status([] { return tr("Stopping…"); });
}

void MainWindow::step_once() {
    if (controller_->is_running() && controller_->is_paused()) controller_->step_once();
}

QStringList MainWindow::demo_names() { return RunDirector::demo_names(); }

bool MainWindow::run_demo(const QString& name) { return director_->run_demo(name); }

bool MainWindow::run_demo(const QString& name, const accum::RunConfig& config) {
    return director_->run_demo(name, config);
}

bool MainWindow::run_experiment(Experiment experiment) { return director_->run_experiment(experiment); }

bool MainWindow::start_lab_experiment(Experiment experiment) {
    tabs_->setCurrentWidget(lab_panel_);
    lab_panel_->run_experiment(experiment);
    return lab_panel_->is_running();
}

void MainWindow::cancel_lab_experiment() { lab_panel_->cancel(); }

void MainWindow::show_live_tab() { tabs_->setCurrentIndex(0); }

void MainWindow::show_live(LiveFocus focus, bool build_up) {
    show_live_tab();
    set_live_focus(focus);
    if (build_up)
        code_panel_->start_build_up();
    else
        code_panel_->end_build_up();
}

void MainWindow::reset_to_defaults() {
    if (!director_->reset_to_defaults()) return;
    set_status([] { return tr("Configuration reset to defaults."); });
    undo_reset_button_->show();
    undo_reset_timer_.start();
    update_actions();
}

void MainWindow::undo_reset() {
    if (!director_->undo_reset()) return;
    set_status([] { return tr("Configuration restored."); });
    undo_reset_button_->hide();
    undo_reset_timer_.stop();
    update_actions();
}

void MainWindow::keep_focus_in_place() {
    QPointer<QWidget> focus = focus_anchor_;
    focus_anchor_ = nullptr;
    if (!focus) return;
    // The form's new layout and its new height in the scroll area first.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    if (!focus) return;
    const int moved = focus->mapTo(config_scroll_->viewport(), QPoint(0, 0)).y() - focus_anchor_y_;
    if (moved != 0) config_scroll_->verticalScrollBar()->setValue(config_scroll_->verticalScrollBar()->value() + moved);
}

void MainWindow::update_config_problems() {
    const auto& problems = config_panel_->problems();
    QStringList lines;
    for (int i = 0; i < problems.size(); ++i) {
        const auto text = problems[i].text.toHtmlEscaped();
        lines << (problems[i].field ? QStringLiteral("<a href=\"%1\" style=\"color:#b3261e\">%2</a>").arg(i).arg(text)
                                    : text);
    }
    config_problems_->setText(lines.join(QStringLiteral("<br>")));
    config_problems_->setToolTip(problems.isEmpty() ? QString() : tr("Click a problem to show its field"));
    config_problems_->setVisible(!problems.isEmpty());
}

} // namespace studio
