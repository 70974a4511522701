// SPDX-License-Identifier: GPL-3.0-or-later
#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QScreen>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QPushButton>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <utility>

#include "code_panel.h"
#include "config_panel.h"
#include "engine_text.h"
#include "lab_panel.h"
#include "lesson_panel.h"
#include "screen_fit.h"
#include "runs_panel.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "noise_plot.h"
#include "noise_scale.h"
#include "oom_banner.h"
#include "run_controller.h"

namespace studio {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    texts_.add([this] { setWindowTitle(tr("Accumulate Studio — gradient accumulation, live")); });
    controller_ = new RunController(this);
    director_ = new RunDirector(*this, this);
    file_actions_ = new FileActions(*this, FileActions::modal_dialog(this), this);
    build_layout();
    build_actions();

    connect(controller_, &RunController::records_ready, live_view_, &LiveView::append);
    // A change of the thread count mid-run says why where the eye is, for a while.
    connect(live_view_, &LiveView::threads_changed, this,
            [this](const QString& line) { statusBar()->showMessage(line, 10000); });
    connect(controller_, &RunController::finished, this, &MainWindow::on_finished);
    connect(controller_, &RunController::paused_changed, this, [this] { update_actions(); });
    connect(config_panel_, &ConfigPanel::validity_changed, this, [this] { update_actions(); });
    connect(config_panel_, &ConfigPanel::config_changed, this, [this] {
        if (!controller_->is_running()) {
            const auto c = config_panel_->config();
            code_panel_->set_configuration(c);
            code_panel_->preview_accumulation_steps(static_cast<int>(c.accumulation_steps));
        }
        update_config_summary();
        runs_panel_->follow_runs_folder(QString::fromStdString(config_panel_->config().output_dir));
    });
    code_panel_->preview_accumulation_steps(static_cast<int>(config_panel_->config().accumulation_steps));
    connect(code_panel_, &CodePanel::step_once_requested, this, &MainWindow::step_once);
    lab_panel_->set_base_config_provider([this] { return director_->lab_base_config(); });
    lab_panel_->set_noise_scale_provider([this](const accum::RunConfig& base) {
        return config_panel_->measured_noise_scale_for(base);
    });
    lab_panel_->set_shapes_provider([this] { return lesson_panel_->requested_shapes(); });
    connect(lab_panel_, &LabPanel::experiment_requested, this, &MainWindow::run_experiment);
    connect(lab_panel_, &LabPanel::run_finished, this, [this](const RunResult& r) {
        if (engine_refused_as_busy(r.summary)) return; // a refused run never ran
        runs_panel_->add_run(r);
        take_noise_scale(r, [label = r.label] { return tr("the lab's run “%1”").arg(label); });
    });
    connect(runs_panel_, &RunsPanel::run_chosen, this, [this](int row) {
        const auto& run = runs_panel_->run(row);
        take_noise_scale(run, [label = run.label] { return tr("run “%1”").arg(label); });
    });
    connect(lab_panel_, &LabPanel::busy_changed, this, [this] { update_actions(); });
    // The lesson asks; the window decides and answers (engine_use.h). The lesson
    // hears of a run's end first: its verdict is on screen when the command line's
    // screenshot is taken.
    connect(lesson_panel_, &LessonPanel::live_run_requested, director_, &RunDirector::run_lesson_live);
    connect(lesson_panel_, &LessonPanel::experiment_requested, director_, &RunDirector::run_lesson_experiment);
    connect(lesson_panel_, &LessonPanel::stop_requested, director_, &RunDirector::stop_lesson_run);
    connect(lesson_panel_, &LessonPanel::closed, director_, &RunDirector::leave_lesson);
    connect(director_, &RunDirector::lesson_run_started, lesson_panel_, &LessonPanel::on_run_started);
    connect(director_, &RunDirector::lesson_run_refused, lesson_panel_, &LessonPanel::on_run_refused);
    connect(this, &MainWindow::run_finished, lesson_panel_,
            [this] { lesson_panel_->on_live_run_finished(live_view_->run()); });
    connect(this, &MainWindow::experiment_finished, lesson_panel_,
            [this] { lesson_panel_->on_experiment_finished(lab_panel_->results()); });
    connect(lab_panel_, &LabPanel::experiment_finished, this, &MainWindow::experiment_finished);
    // One click applies the suggestion and runs it.
    connect(oom_banner_, &OomBanner::apply_requested, this, [this](std::int64_t b, std::int64_t k, bool checkpointing) {
        config_panel_->set_batching(b, k, checkpointing);
        if (start_run()) return;
        set_status([b, k, checkpointing] {
            return checkpointing ? tr("Suggestion applied: %1 × %2 with gradient checkpointing. Press Run.").arg(b).arg(k)
                                 : tr("Suggestion applied: %1 × %2. Press Run.").arg(b).arg(k);
        });
    });
    connect(config_panel_, &ConfigPanel::problems_changed, this, &MainWindow::update_config_problems);
    config_panel_->installEventFilter(this);
    // The engine estimates memory only between runs: the estimate a run kept
    // waiting comes when it ends.
    connect(lab_panel_, &LabPanel::experiment_finished, config_panel_, &ConfigPanel::refresh_estimate_a_run_held);

    undo_reset_timer_.setSingleShot(true);
    undo_reset_timer_.setInterval(30000); // the Undo button's time beside the status line
    connect(&undo_reset_timer_, &QTimer::timeout, this, [this] { undo_reset_button_->hide(); });

    restore_settings();
    runs_panel_->set_runs_folder(QString::fromStdString(config_panel_->config().output_dir)); // earlier runs
    update_config_problems();
    code_panel_->set_configuration(config_panel_->config());
    update_actions();
    update_config_summary();
    fit_to_screen(screen());
}

MainWindow::~MainWindow() {
    controller_->shutdown();
    lab_panel_->queue()->controller()->shutdown();
}

void MainWindow::build_layout() {
    config_panel_ = new ConfigPanel;
    auto* scroll = config_scroll_ = new QScrollArea;
    scroll->setObjectName(QStringLiteral("config_area"));
    scroll->setWidget(config_panel_);
    scroll->setWidgetResizable(true);
    // Its natural width where there is room; on a 1024 px projector it may be
    // narrower and scroll sideways, so the plots and the code keep theirs.
    scroll->setMinimumWidth(240);
    // The form's problems, below it and outside its scrolling: in view whatever the
    // form shows, and appearing there moves no field of the form.
    config_problems_ = new QLabel;
    config_problems_->setObjectName(QStringLiteral("config_problems"));
    config_problems_->setWordWrap(true);
    config_problems_->setTextFormat(Qt::RichText);
    config_problems_->setContentsMargins(6, 4, 6, 4);
    QPalette red;
    red.setColor(QPalette::WindowText, QColor(0xb3261e));
    config_problems_->setPalette(red);
    config_problems_->hide();
    connect(config_problems_, &QLabel::linkActivated, this, [this](const QString& link) {
        const int index = link.toInt();
        const auto& problems = config_panel_->problems();
        if (index < 0 || index >= problems.size() || !problems[index].field) return;
        QWidget* field = problems[index].field;
        config_scroll_->ensureWidgetVisible(field, 20, 60);
        if (auto* error = config_panel_->error_label(field)) config_scroll_->ensureWidgetVisible(error, 20, 20);
        field->setFocus(Qt::OtherFocusReason);
    });
    config_column_ = new QWidget;
    config_column_->setObjectName(QStringLiteral("config_column"));
    auto* column_layout = new QVBoxLayout(config_column_);
    column_layout->setContentsMargins(0, 0, 0, 0);
    column_layout->setSpacing(0);
    column_layout->addWidget(scroll, 1);
    column_layout->addWidget(config_problems_);

    oom_banner_ = new OomBanner;
    loss_plot_ = new LossPlot;
    memory_plot_ = new MemoryPlot;
    noise_plot_ = new NoisePlot;

    eval_table_ = new QTableWidget(0, 5);
    eval_table_->setObjectName(QStringLiteral("eval_table"));
    texts_.add([this] {
        eval_table_->setHorizontalHeaderLabels({tr("Epoch"), tr("Step"), tr("Eval loss"), tr("Accuracy"), tr("F1")});
    });
    // Each column as wide as its header and numbers (a Vietnamese header is longer
    // than the English one); the table scrolls sideways where it has less room.
    eval_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    eval_table_->horizontalHeader()->setStretchLastSection(true);
    eval_table_->setWordWrap(false);
    eval_table_->setTextElideMode(Qt::ElideNone);
    eval_table_->verticalHeader()->setVisible(false);
    eval_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    eval_table_->setAlternatingRowColors(true);

    log_view_ = new QPlainTextEdit;
    log_view_->setObjectName(QStringLiteral("log_view"));
    log_view_->setReadOnly(true);
    log_view_->setMaximumBlockCount(2000);
    log_font_ = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    log_view_->setFont(log_font_);
    texts_.add([this] { log_view_->setPlaceholderText(tr("The run's log, as the style's Python original would print it")); });

    auto* bottom = new QSplitter(Qt::Horizontal);
    auto* eval_box = new QWidget;
    auto* eval_layout = new QVBoxLayout(eval_box);
    eval_layout->setContentsMargins(0, 0, 0, 0);
    auto* eval_title = new QLabel;
    texts_.add([eval_title] { eval_title->setText(tr("<b>Evaluation per epoch</b>")); });
    eval_layout->addWidget(eval_title);
    eval_layout->addWidget(eval_table_);
    auto* log_box = new QWidget;
    auto* log_layout = new QVBoxLayout(log_box);
    log_layout->setContentsMargins(0, 0, 0, 0);
    auto* log_title = new QLabel;
    texts_.add([log_title] { log_title->setText(tr("<b>Run log</b>")); });
    log_layout->addWidget(log_title);
    log_layout->addWidget(log_view_);
    bottom->addWidget(eval_box);
    bottom->addWidget(log_box);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);

    auto* plots = plots_split_ = new QSplitter(Qt::Vertical);
    plots->addWidget(loss_plot_);
    plots->addWidget(memory_plot_);
    plots->addWidget(bottom);
    plots->setStretchFactor(0, 5);
    plots->setStretchFactor(1, 3);
    plots->setStretchFactor(2, 2);
    plots->setSizes({460, 260, 170});

    progress_ = new QProgressBar;
    progress_->setObjectName(QStringLiteral("progress"));
    progress_->setRange(0, 1000);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    progress_->setFormat(QStringLiteral("%p%"));
    progress_->setMinimumHeight(24);
    status_label_ = new QLabel;
    status_label_->setObjectName(QStringLiteral("status_label"));
    set_status([] { return tr("Ready"); });
    QFont bold; // bold only: the size follows the window's font (presentation mode)
    bold.setBold(true);
    status_label_->setFont(bold);
    // It shares the row with the progress bar and wraps onto more lines rather than
    // cut its message (an engine's error, a refused start).
    status_label_->setWordWrap(true);
    status_label_->setMinimumWidth(120);
    status_label_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    auto* step_label = new QLabel;
    auto* epoch_label = new QLabel;
    auto* speed_label = new QLabel;
    threads_label_ = new QLabel;
    threads_label_->setObjectName(QStringLiteral("threads_label"));
    auto* eta_label = new QLabel;
    auto* status_row = new QHBoxLayout;
    status_row->addWidget(status_label_, 3);
    status_row->addWidget(progress_, 2);
    status_row->addWidget(step_label);
    status_row->addWidget(epoch_label);
    status_row->addWidget(speed_label);
    status_row->addWidget(threads_label_);
    status_row->addWidget(eta_label);

    code_panel_ = new CodePanel;
    auto* live_split = live_split_ = new QSplitter(Qt::Horizontal);
    live_split->setObjectName(QStringLiteral("live_split"));
    live_split->addWidget(plots);
    live_split->addWidget(code_panel_);
    live_split->setStretchFactor(0, 3);
    live_split->setStretchFactor(1, 2);
    live_split->setSizes({600, 470});
    code_panel_->setMinimumWidth(280); // the listing scrolls sideways on a 1024 px screen
    live_view_ = new LiveView({loss_plot_, memory_plot_, noise_plot_, eval_table_, log_view_, progress_, step_label,
                               epoch_label, speed_label, threads_label_, eta_label, code_panel_},
                              this);
    live_view_->fit_labels();

    auto* live = new QWidget;
    auto* live_layout = new QVBoxLayout(live);
    live_layout->setContentsMargins(0, 4, 0, 0);
    live_layout->addWidget(oom_banner_);
    live_layout->addLayout(status_row);
    live_layout->addWidget(noise_plot_->readout()); // in view in presentation mode too
    live_layout->addWidget(live_split, 1);

    lab_panel_ = new LabPanel;
    runs_panel_ = new RunsPanel;
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("main_tabs"));
    tabs_->setDocumentMode(true);
    tabs_->addTab(live, QString());
    tabs_->addTab(lab_panel_, QString());
    tabs_->addTab(runs_panel_, QString());
    // The noise scale's plot has a tab of its own: beside the evaluation it would
    // widen the window past a 1024 px screen. Its readout stays in the live tab.
    tabs_->addTab(noise_plot_, QString());
    texts_.add([this] {
        tabs_->setTabText(0, tr("Live run"));
        tabs_->setTabText(1, tr("Equivalence lab"));
        tabs_->setTabText(2, tr("Runs"));
        tabs_->setTabText(3, tr("Noise scale"));
    });

    auto* right = new QWidget;
    auto* right_layout = new QVBoxLayout(right);
    right_layout->setContentsMargins(4, 0, 0, 0);
    lesson_panel_ = new LessonPanel;
    right_layout->addWidget(lesson_panel_);
    right_layout->addWidget(tabs_, 1);

    auto* main_split = new QSplitter(Qt::Horizontal);
    main_split->addWidget(config_column_);
    main_split->addWidget(right);
    main_split->setStretchFactor(0, 0);
    main_split->setStretchFactor(1, 1);
    setCentralWidget(main_split);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == config_panel_ && event->type() == QEvent::LayoutRequest && !focus_anchor_) {
        QWidget* focus = focusWidget(); // the window's, also while another window is active
        if (focus && config_panel_->isAncestorOf(focus) && config_scroll_->isVisible()) {
            focus_anchor_ = focus;
            focus_anchor_y_ = focus->mapTo(config_scroll_->viewport(), QPoint(0, 0)).y();
            QTimer::singleShot(0, this, &MainWindow::keep_focus_in_place);
        }
    }
    if (watched == config_summary_ && (event->type() == QEvent::Resize || event->type() == QEvent::FontChange))
        update_config_summary();
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::start_lesson(int index) { lesson_panel_->start(index); }

EngineState MainWindow::engine_state() const {
    EngineState state;
    state.live_running = controller_->is_running();
    state.live_paused = controller_->is_paused();
    state.lab_running = lab_panel_ && lab_panel_->is_running();
    state.lesson_step = lesson_panel_ && lesson_panel_->is_running();
    return state;
}

void MainWindow::update_actions() {
    const auto state = engine_state();
    const auto allowed = engine_actions(state, config_panel_->is_valid());
    run_action_->setEnabled(allowed.run);
    step_action_->setEnabled(allowed.step);
    pause_action_->setEnabled(allowed.pause);
    stop_action_->setEnabled(allowed.stop);
    code_panel_->set_paused(state.live_paused, state.live_running);
    lab_panel_->set_experiments_enabled(allowed.experiments);
    for (auto* action : experiment_actions_) action->setEnabled(allowed.experiments);
    pause_action_->setText(state.live_paused ? tr("Resume") : tr("&Pause"));
    pause_action_->setIcon(QApplication::style()->standardIcon(state.live_paused ? QStyle::SP_MediaPlay
                                                                                  : QStyle::SP_MediaPause));
    config_panel_->setEnabled(allowed.configure);
    reset_defaults_action_->setEnabled(allowed.configure);
    undo_reset_action_->setEnabled(allowed.configure && director_->can_undo_reset());
    undo_reset_button_->setEnabled(allowed.configure);
    if (state.live_running) {
        const bool paused = state.live_paused;
        set_status([paused] { return paused ? tr("Paused") : tr("Running"); });
    }
}

void MainWindow::set_status(std::function<QString()> text, std::function<QString()> tooltip) {
    status_text_ = std::move(text);
    status_label_->setText(status_text_());
    if (tooltip) {
        status_tip_ = std::move(tooltip);
        status_label_->setToolTip(status_tip_());
    }
}

bool MainWindow::event(QEvent* event) {
    // After the children: the summary and the status line read the form's choices
    // and the panels' texts, which their own changeEvent has set by then.
    const bool handled = QMainWindow::event(event);
    if (event->type() == QEvent::LanguageChange) retranslate();
    return handled;
}

void MainWindow::retranslate() {
    texts_.apply();
    if (status_text_) status_label_->setText(status_text_());
    if (status_tip_) status_label_->setToolTip(status_tip_());
    update_actions();
    live_view_->retranslate();
    update_config_summary();
    update_config_problems();
}

void MainWindow::take_noise_scale(const RunResult& run, std::function<QString()> source) {
    const double noise_scale = measured_noise_scale_in_samples(run);
    if (noise_scale_known(noise_scale)) config_panel_->set_measured_noise_scale(noise_scale, std::move(source), run.config);
}

void MainWindow::show_refusal(const QString& why) {
    // The status line beside the progress bar wraps the whole message; the status
    // bar's line, which cuts a long one, gets it too for the other tabs.
    const auto text = [why] { return tr("Not started: %1").arg(why); };
    set_status(text, text);
    statusBar()->showMessage(text(), 10000);
}

void MainWindow::on_finished(const accum::SummaryRecord& summary) {
    live_view_->finish(summary); // the last records drawn, the run's time and speed
    if (engine_refused_as_busy(summary)) {
        // The engine refused to start it: another run of this process trains. Nothing
        // ran, so the Runs tab gets no row.
        update_actions();
        set_status([summary] { return tr("Not started: %1").arg(engine_message(summary)); },
                   [summary] { return engine_message(summary); });
        config_panel_->refresh_estimate_a_run_held();
        Q_EMIT run_finished(summary);
        return;
    }
    if (summary.status == accum::RunStatus::OutOfMemory) {
        const auto& running = live_view_->run().config;
        oom_banner_->show_for(summary, running.batch_size, running.accumulation_steps, lesson_panel_->running_lever());
    }
    update_actions();
    set_status(
        [summary] {
            QString text = run_status_text(summary.status);
            if (summary.status == accum::RunStatus::Completed)
                text += tr(" — %1 optimizer steps, final loss %2")
                            .arg(summary.optimizer_steps)
                            .arg(summary.final_loss, 0, 'f', 4);
            else if (summary.status == accum::RunStatus::OutOfMemory) {
                if (const auto oom = out_of_memory_text(summary)) text += QStringLiteral(": ") + oom->brief;
            } else if (!summary.message.empty())
                text += QStringLiteral(": ") + engine_message(summary);
            return text;
        },
        [summary] { return engine_message(summary); });
    runs_panel_->add_run(live_view_->run());
    take_noise_scale(live_view_->run(), [] { return tr("the live run"); });
    config_panel_->refresh_estimate_a_run_held();
    Q_EMIT run_finished(summary);
}

} // namespace studio
