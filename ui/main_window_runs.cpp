// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow, its runs: the live run's start, pause, stop and single step, the
// demos, the lesson's and the lab's runs, and the form they borrow and give back
// (reset to defaults and its undo). The window's layout is in main_window.cpp.
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

bool MainWindow::start_run() {
    QString why = engine_refusal(engine_state());
    if (why.isEmpty() && !config_panel_->is_valid())
        why = config_panel_->problems_text().replace(QLatin1Char('\n'), QStringLiteral("; "));
    if (!why.isEmpty()) {
        show_refusal(why);
        return false;
    }
    return start_live(config_panel_->config(), true);
}

bool MainWindow::start_live(const accum::RunConfig& config, bool users) {
    running_config_ = config;
    running_config_.record_micro_steps = true; // the faint per-micro-batch curve
    running_config_.quiet = true;
    if (users) store_settings();
    loss_plot_->set_micro_batch_size(running_config_.batch_size);
    loss_plot_->set_loss_scaling(running_config_.uses_loss_scaler());
    loss_plot_->clear();
    memory_plot_->clear();
    memory_plot_->set_device(QString::fromStdString(running_config_.device));
    eval_table_->setRowCount(0);
    log_view_->clear();
    oom_banner_->hide();
    last_step_ = accum::StepRecord{};
    last_summary_ = accum::SummaryRecord{};
    progress_->setValue(0);
    step_label_->clear();
    epoch_label_->clear();
    speed_label_->clear();
    threads_label_->clear();
    threads_label_->setToolTip({});
    eta_label_->clear();
    code_panel_->set_configuration(running_config_);
    code_panel_->set_model_file(running_config_.model == accum::ModelKind::File
                                    ? QString::fromStdString(running_config_.model_file)
                                    : QString());
    code_panel_->start_run(static_cast<int>(running_config_.accumulation_steps),
                           static_cast<int>(std::lround(running_config_.micro_step_delay_s * 1000.0)),
                           static_cast<int>(running_config_.world_size()));
    live_run_ = RunResult{};
    live_run_.config = running_config_;
    live_run_.source = QStringLiteral("live");
    live_run_.label = tr("run %1").arg(++live_run_count_);
    controller_->start(running_config_);
    refresh_timer_.setInterval(RefreshBudget::kFastestMs);
    refresh_budget_.start();
    refresh_timer_.start();
    update_actions();
    return true;
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

QStringList MainWindow::demo_names() {
    QStringList names{QStringLiteral("code-panel")};
    for (const auto& info : experiments()) names << QLatin1String(info.id);
    return names;
}

bool MainWindow::run_demo(const QString& name) {
    if (name == QLatin1String("code-panel")) {
        tabs_->setCurrentIndex(0);
        start_run();
        return true;
    }
    const auto* info = find_experiment(name);
    if (!info) return false;
    run_experiment(info->experiment);
    return true;
}

bool MainWindow::run_demo(const QString& name, const accum::RunConfig& config) {
    const bool live = name == QLatin1String("code-panel");
    const auto* info = live ? nullptr : find_experiment(name);
    if (!live && !info) return false;
    if (const auto why = engine_refusal(engine_state()); !why.isEmpty()) {
        show_refusal(why);
        return true;
    }
    if (const auto problems = accum::validate(config); !problems.empty()) {
        show_refusal(QString::fromStdString(problems.front().to_string()));
        return true;
    }
    if (live) {
        tabs_->setCurrentIndex(0);
        start_live(config, false);
        return true;
    }
    // The lab reads its base configuration when the experiment starts: the demo's, this once.
    experiment_config_ = config;
    run_experiment(info->experiment);
    experiment_config_.reset();
    return true;
}

void MainWindow::reset_to_defaults() {
    if (!engine_actions(engine_state(), config_panel_->is_valid()).configure) return;
    config_before_reset_ = config_panel_->config();
    config_panel_->set_config(accum::RunConfig{});
    // During the lesson the defaults are what leaving it brings back.
    if (user_config_) user_config_ = accum::RunConfig{};
    store_settings();
    set_status([] { return tr("Configuration reset to defaults."); });
    undo_reset_button_->show();
    undo_reset_timer_.start();
    update_actions();
}

void MainWindow::undo_reset() {
    if (!config_before_reset_) return;
    config_panel_->set_config(*config_before_reset_);
    if (user_config_) user_config_ = *config_before_reset_;
    config_before_reset_.reset();
    store_settings();
    set_status([] { return tr("Configuration restored."); });
    undo_reset_button_->hide();
    undo_reset_timer_.stop();
    update_actions();
}

void MainWindow::borrow_form_for_lesson(const accum::RunConfig& config) {
    if (!user_config_) user_config_ = config_panel_->config();
    config_panel_->set_config(config);
}

void MainWindow::leave_lesson() {
    if (!user_config_) return;
    const auto mine = *user_config_;
    user_config_.reset();
    config_panel_->set_config(mine);
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

bool MainWindow::run_experiment(Experiment experiment) {
    if (const auto why = engine_refusal(engine_state()); !why.isEmpty()) {
        show_refusal(why);
        return false;
    }
    tabs_->setCurrentWidget(lab_panel_);
    lab_panel_->run_experiment(experiment);
    return lab_panel_->is_running();
}

bool MainWindow::lesson_may_start() {
    // Asked before the step's configuration replaces the one a run started by hand
    // goes with.
    const auto why = engine_refusal(engine_state());
    if (!why.isEmpty()) lesson_panel_->on_run_refused(why);
    return why.isEmpty();
}

void MainWindow::run_lesson_live(const accum::RunConfig& config, LiveFocus focus) {
    if (!lesson_may_start()) return;
    borrow_form_for_lesson(config);
    tabs_->setCurrentIndex(0);
    set_live_focus(focus);
    // The mechanism's step builds the loop up a line at a time while it runs.
    if (focus == LiveFocus::Code)
        code_panel_->start_build_up();
    else
        code_panel_->end_build_up();
    if (start_run())
        lesson_panel_->on_run_started();
    else
        lesson_panel_->on_run_refused(config_panel_->problems_text());
}

void MainWindow::run_lesson_experiment(const accum::RunConfig& config, Experiment experiment) {
    if (!lesson_may_start()) return;
    borrow_form_for_lesson(config);
    if (run_experiment(experiment))
        lesson_panel_->on_run_started();
    else
        lesson_panel_->on_run_refused(engine_refusal(engine_state()));
}

void MainWindow::stop_lesson_run() {
    // The lesson asks only while its own run goes, and only one run goes at a time.
    if (controller_->is_running()) stop_run();
    if (lab_panel_->is_running()) lab_panel_->cancel();
}


} // namespace studio
