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
#include "shortcuts.h"
#include "runs_panel.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "oom_banner.h"
#include "run_controller.h"

namespace studio {

namespace {

QString threads_text(int count) {
    return count == 1 ? MainWindow::tr("1 thread") : MainWindow::tr("%1 threads").arg(count);
}

QString format_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("–");
    const auto s = static_cast<qint64>(std::llround(seconds));
    if (s >= 3600) return QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    texts_.add([this] { setWindowTitle(tr("Accumulate Studio — gradient accumulation, live")); });
    controller_ = new RunController(this);
    director_ = new RunDirector(*this, this);
    build_layout();
    build_actions();

    connect(controller_, &RunController::records_ready, this, &MainWindow::on_records);
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
    connect(lab_panel_, &LabPanel::experiment_requested, this, &MainWindow::run_experiment);
    connect(lab_panel_, &LabPanel::run_finished, this, [this](const RunResult& r) {
        if (!engine_refused_as_busy(r.summary)) runs_panel_->add_run(r); // a refused run never ran
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
    connect(this, &MainWindow::run_finished, lesson_panel_, [this] { lesson_panel_->on_live_run_finished(live_run_); });
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

    // At most 10 replots a second: live enough to watch, and it leaves the CPU to
    // training (faster replots cost the engine a good part of its speed on 2
    // cores: bench/RESULTS.md, "Figures quoted in the code").
    // During a run the interval stretches if drawing costs more than its budget
    // (refresh_budget.h).
    refresh_timer_.setInterval(RefreshBudget::kFastestMs);
    connect(&refresh_timer_, &QTimer::timeout, this, &MainWindow::on_refresh_timer);

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
    // The log follows new lines while the user is at its end; scrolling up to read
    // stops it, scrolling back to the end resumes it. Decided here, not by
    // QPlainTextEdit's own test at each append, which (with the block limit, or
    // while the log is out of view) lost the end and then never followed again.
    auto* log_bar = log_view_->verticalScrollBar();
    connect(log_bar, &QScrollBar::actionTriggered, this,
            [this, log_bar] { log_follow_ = log_bar->sliderPosition() >= log_bar->maximum(); });
    connect(log_bar, &QScrollBar::valueChanged, this, [this, log_bar](int value) {
        if (value >= log_bar->maximum()) log_follow_ = true;
    });

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
    step_label_ = new QLabel;
    epoch_label_ = new QLabel;
    speed_label_ = new QLabel;
    threads_label_ = new QLabel;
    threads_label_->setObjectName(QStringLiteral("threads_label"));
    eta_label_ = new QLabel;
    fit_status_labels();
    auto* status_row = new QHBoxLayout;
    status_row->addWidget(status_label_, 3);
    status_row->addWidget(progress_, 2);
    status_row->addWidget(step_label_);
    status_row->addWidget(epoch_label_);
    status_row->addWidget(speed_label_);
    status_row->addWidget(threads_label_);
    status_row->addWidget(eta_label_);

    code_panel_ = new CodePanel;
    auto* live_split = live_split_ = new QSplitter(Qt::Horizontal);
    live_split->setObjectName(QStringLiteral("live_split"));
    live_split->addWidget(plots);
    live_split->addWidget(code_panel_);
    live_split->setStretchFactor(0, 3);
    live_split->setStretchFactor(1, 2);
    live_split->setSizes({600, 470});
    code_panel_->setMinimumWidth(280); // the listing scrolls sideways on a 1024 px screen

    auto* live = new QWidget;
    auto* live_layout = new QVBoxLayout(live);
    live_layout->setContentsMargins(0, 4, 0, 0);
    live_layout->addWidget(oom_banner_);
    live_layout->addLayout(status_row);
    live_layout->addWidget(live_split, 1);

    lab_panel_ = new LabPanel;
    runs_panel_ = new RunsPanel;
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("main_tabs"));
    tabs_->setDocumentMode(true);
    tabs_->addTab(live, QString());
    tabs_->addTab(lab_panel_, QString());
    tabs_->addTab(runs_panel_, QString());
    texts_.add([this] {
        tabs_->setTabText(0, tr("Live run"));
        tabs_->setTabText(1, tr("Equivalence lab"));
        tabs_->setTabText(2, tr("Runs"));
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

void MainWindow::fit_status_labels() {
    // Each label keeps one size, that of its widest text, so setting its text during
    // a run repaints the label alone. A label whose size hint follows its text asks
    // for a new layout of the whole window at each change, twice a second, and the
    // layout measures the text of every widget again, on the cores that train.
    // Measured again when presentation mode changes the font.
    const auto keep_size = [](QLabel* label, const QStringList& widest) {
        const QFontMetrics metrics(label->font());
        int width = 0;
        for (const auto& text : widest) width = std::max(width, metrics.horizontalAdvance(text) + 12);
        label->setFixedSize(width, metrics.height() + 6);
    };
    const QString long_duration = format_duration(99 * 3600 + 59 * 60 + 59);
    keep_size(step_label_, {tr("Step %1").arg(9999999)});
    keep_size(epoch_label_, {tr("Epoch %1").arg(9999.99, 0, 'f', 2)});
    keep_size(speed_label_, {tr("%1 samples/s").arg(9999999.0, 0, 'f', 0)});
    keep_size(threads_label_, {threads_text(1), threads_text(88)});
    keep_size(eta_label_, {tr("ETA %1").arg(long_duration), tr("took %1").arg(long_duration)});
}

void MainWindow::build_actions() {
    auto* style = QApplication::style();
    run_action_ = new QAction(style->standardIcon(QStyle::SP_MediaPlay), QString(), this);
    run_action_->setObjectName(QStringLiteral("run_action"));
    run_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    pause_action_ = new QAction(style->standardIcon(QStyle::SP_MediaPause), QString(), this);
    pause_action_->setObjectName(QStringLiteral("pause_action"));
    pause_action_->setShortcut(QKeySequence(Qt::Key_Space));
    stop_action_ = new QAction(style->standardIcon(QStyle::SP_MediaStop), QString(), this);
    stop_action_->setObjectName(QStringLiteral("stop_action"));
    stop_action_->setShortcut(QKeySequence(Qt::Key_Escape));
    step_action_ = new QAction(style->standardIcon(QStyle::SP_MediaSkipForward), QString(), this);
    step_action_->setObjectName(QStringLiteral("step_action"));
    step_action_->setShortcut(QKeySequence(Qt::Key_F10));
    texts_.add([this] {
        run_action_->setText(tr("&Run"));
        run_action_->setToolTip(tr("Start the run (Ctrl+R)"));
        pause_action_->setToolTip(tr("Pause or resume at the next micro-batch (Space)")); // its text: update_actions()
        stop_action_->setText(tr("&Stop"));
        stop_action_->setToolTip(tr("Stop at the next micro-batch (Esc)"));
        step_action_->setText(tr("Step one micro-batch"));
        step_action_->setToolTip(tr("While paused: run exactly one more micro-batch (F10)"));
    });
    connect(step_action_, &QAction::triggered, this, &MainWindow::step_once);
    connect(run_action_, &QAction::triggered, this, &MainWindow::start_run);
    connect(pause_action_, &QAction::triggered, this, &MainWindow::toggle_pause);
    connect(stop_action_, &QAction::triggered, this, &MainWindow::stop_run);

    auto* toolbar = toolbar_ = addToolBar(QString());
    texts_.add([toolbar] { toolbar->setWindowTitle(tr("Run")); });
    toolbar->setObjectName(QStringLiteral("run_toolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setMovable(false);
    toolbar->addAction(run_action_);
    toolbar->addAction(pause_action_);
    toolbar->addAction(stop_action_);
    toolbar->addAction(step_action_);
    // Presentation mode folds the configuration panel into this line; the button
    // unfolds it for a change.
    show_config_action_ = new QAction(style->standardIcon(QStyle::SP_FileDialogDetailedView), QString(), this);
    show_config_action_->setObjectName(QStringLiteral("show_config_action"));
    show_config_action_->setCheckable(true);
    texts_.add([this] {
        show_config_action_->setText(tr("Configuration"));
        show_config_action_->setToolTip(tr("Show or hide the configuration panel"));
    });
    connect(show_config_action_, &QAction::toggled, this, [this](bool on) { config_column_->setVisible(on); });
    config_summary_ = new QLabel;
    config_summary_->setObjectName(QStringLiteral("config_summary"));
    QFont bold; // bold only: the size follows the window's font
    bold.setBold(true);
    config_summary_->setFont(bold);
    QPalette summary_palette;
    summary_palette.setColor(QPalette::WindowText, QColor(0x1f4e99));
    config_summary_->setPalette(summary_palette);
    config_summary_->setIndent(12);
    config_summary_->setMinimumWidth(1); // the toolbar gives it what the actions leave
    config_summary_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    config_summary_->installEventFilter(this);
    toolbar->addSeparator();
    toolbar->addAction(show_config_action_);
    config_summary_action_ = toolbar->addWidget(config_summary_);
    show_config_action_->setVisible(false);
    config_summary_action_->setVisible(false);

    auto* file = menuBar()->addMenu(QString());
    auto* open = file->addAction(QString(), QKeySequence::Open, this, &MainWindow::load_config_dialog);
    auto* save = file->addAction(QString(), QKeySequence::Save, this, &MainWindow::save_config_dialog);
    auto* open_lesson = file->addAction(QString(), this, &MainWindow::open_lesson_dialog);
    open_lesson->setObjectName(QStringLiteral("open_lesson_action"));
    file->addSeparator();
    auto* export_loss = file->addAction(QString(), this, [this] { export_plot_dialog(true); });
    auto* export_memory = file->addAction(QString(), this, [this] { export_plot_dialog(false); });
    auto* export_csv = file->addAction(QString(), this, &MainWindow::export_csv_dialog);
    file->addSeparator();
    auto* quit = file->addAction(QString(), QKeySequence::Quit, this, &QWidget::close);
    texts_.add([=] {
        file->setTitle(tr("&File"));
        open->setText(tr("&Open configuration…"));
        save->setText(tr("&Save configuration…"));
        open_lesson->setText(tr("Open &lesson…"));
        export_loss->setText(tr("Export loss plot (PNG/PDF)…"));
        export_memory->setText(tr("Export memory plot (PNG/PDF)…"));
        export_csv->setText(tr("Export data (CSV)…"));
        quit->setText(tr("&Quit"));
    });
    auto* run = menuBar()->addMenu(QString());
    texts_.add([run] { run->setTitle(tr("&Run")); });
    run->addAction(run_action_);
    run->addAction(pause_action_);
    run->addAction(stop_action_);
    run->addAction(step_action_);
    auto* lab = menuBar()->addMenu(QString());
    auto* lesson = lab->addAction(QString(), this, [this] {
        // The built-in lesson, after a lesson file too (File › Open lesson…).
        if (&lesson_panel_->lesson() != &builtin_lesson()) lesson_panel_->set_lesson(builtin_lesson_shared());
        start_lesson(0);
    });
    lesson->setObjectName(QStringLiteral("lesson_action"));
    texts_.add([lab, lesson] {
        lab->setTitle(tr("&Lab"));
        lesson->setText(tr("&Lesson"));
        lesson->setToolTip(tr("The chapter on gradient accumulation, step by step"));
    });
    // The experiments by group, a separator before each, in the table's order.
    for (const auto group : {ExperimentGroup::Equivalence, ExperimentGroup::Pitfall}) {
        lab->addSeparator();
        for (const auto& info : experiments()) {
            if (info.group != group) continue;
            auto* action = lab->addAction(QString(), this, [this, e = info.experiment] { run_experiment(e); });
            action->setObjectName(info.object_name() + QStringLiteral("_action"));
            texts_.add([action, &info] {
                action->setText(info.menu_title_text());
                action->setToolTip(info.tooltip_text());
            });
            experiment_actions_.push_back(action);
        }
    }
    auto* view = menuBar()->addMenu(QString());
    presentation_action_ = view->addAction(QString());
    presentation_action_->setObjectName(QStringLiteral("presentation_action"));
    presentation_action_->setCheckable(true);
    presentation_action_->setShortcut(QKeySequence(Qt::Key_F11));
    texts_.add([this, view] {
        view->setTitle(tr("&View"));
        presentation_action_->setText(tr("&Presentation"));
        presentation_action_->setToolTip(tr("Large text and lines, the configuration in one line, full screen (F11)"));
    });
    connect(presentation_action_, &QAction::toggled, this, &MainWindow::set_presentation_mode);
    build_language_menu();
    build_help_menu();
}

void MainWindow::set_live_focus(LiveFocus focus) {
    // Shares of the splitters: (plots, code) across, (loss, memory, evaluation) down.
    int plots = 60, code = 40, loss = 50, memory = 30, bottom = 20;
    // Memory: the loss plot folds away (the run ends before its first update); its
    // splitter handle brings it back.
    if (focus == LiveFocus::Memory) std::tie(plots, code, loss, memory, bottom) = std::tuple{70, 30, 0, 85, 15};
    // Code: the memory plot folds away (the mechanism is in the code and the meter).
    if (focus == LiveFocus::Code) std::tie(plots, code, loss, memory, bottom) = std::tuple{45, 55, 85, 0, 15};
    const int width = std::max(live_split_->width(), 100);
    live_split_->setSizes({width * plots / 100, width * code / 100});
    const int height = std::max(plots_split_->height(), 100);
    plots_split_->setSizes({height * loss / 100, height * memory / 100, height * bottom / 100});
}

void MainWindow::update_config_summary() {
    if (!config_summary_) return;
    // Cut with "…" where the toolbar has less room than the line (a Vietnamese
    // summary is longer), never in the middle of a letter; the tooltip has it all.
    const QString full = config_panel_->summary_text();
    const int room = config_summary_->contentsRect().width() - config_summary_->indent() - 4;
    const QString shown =
        room > 0 ? config_summary_->fontMetrics().elidedText(full, Qt::ElideRight, room) : full;
    if (config_summary_->text() != shown) config_summary_->setText(shown);
    config_summary_->setToolTip(full);
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

void MainWindow::apply_presentation_scale(double scale) {
    loss_plot_->set_presentation_scale(scale);
    memory_plot_->set_presentation_scale(scale);
    lab_panel_->set_presentation_scale(scale);
    runs_panel_->set_presentation_scale(scale);
    code_panel_->set_presentation_scale(scale);
    oom_banner_->set_presentation_scale(scale);
    log_view_->setFont(PlotLook::scaled(log_font_, scale));
    toolbar_->setIconSize(desk_icon_size_ * scale);
    // The actions as icons (their tooltips name them): the line beside them is the
    // experiment's summary.
    toolbar_->setToolButtonStyle(scale > 1.0 ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextBesideIcon);
    // Header views take their font from the style's class fonts, not from the window.
    for (auto* header : findChildren<QHeaderView*>()) header->setFont(scale > 1.0 ? font() : QFont());
    // In front of a class the row has no room for it (a 1024-pixel projector):
    // the thread count is a workstation's question, and the log still says it.
    threads_label_->setVisible(scale <= 1.0);
    fit_status_labels();
}

void MainWindow::set_presentation_mode(bool on) {
    if (on == presentation_) return;
    presentation_ = on;
    if (presentation_action_->isChecked() != on) presentation_action_->setChecked(on);
    if (on) {
        desk_font_set_ = testAttribute(Qt::WA_SetFont);
        desk_font_ = font();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        desk_geometry_ = saveGeometry();
        desk_rect_ = geometry();
        desk_maximized_ = isMaximized();
        desk_plots_state_ = plots_split_->saveState();
        desk_live_state_ = live_split_->saveState();
        desk_icon_size_ = toolbar_->iconSize();
        const auto* where = screen() ? screen() : QGuiApplication::primaryScreen();
        const double scale = presentation_scale(where ? where->geometry().height() : 720,
                                                QFontInfo(desk_font_).pixelSize());
        setFont(PlotLook::scaled(desk_font_, scale));
        apply_presentation_scale(scale);
        // The configuration in one line; the plots take the room of the evaluation
        // table and the log.
        config_column_->hide();
        show_config_action_->setChecked(false);
        show_config_action_->setVisible(true);
        config_summary_action_->setVisible(true);
        update_config_summary();
        plots_split_->widget(2)->hide(); // the evaluation table and the run log
        // Half the width for the code: the Chapter view's lines (54 columns) in text a
        // class reads, at 1280 px (test_layout_fit).
        const int across = std::max(live_split_->width(), 100);
        live_split_->setSizes({across / 2, across - across / 2});
        // The whole screen, also where no window manager honours full screen (a bare X server).
        if (where) setGeometry(where->geometry());
        showFullScreen();
    } else {
        setFont(desk_font_set_ ? desk_font_ : QFont());
        apply_presentation_scale(1.0);
        show_config_action_->setVisible(false);
        config_summary_action_->setVisible(false);
        config_column_->show();
        plots_split_->widget(2)->show();
        plots_split_->restoreState(desk_plots_state_);
        live_split_->restoreState(desk_live_state_);
        // The desk fonts' minimum sizes, before the desk geometry is restored.
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        if (layout()) layout()->activate();
        if (desk_maximized_) {
            showMaximized();
        } else {
            showNormal();
            setGeometry(desk_rect_);
        }
    }
}

void MainWindow::build_language_menu() {
    auto* settings_menu = menuBar()->addMenu(QString());
    reset_defaults_action_ = settings_menu->addAction(QString(), this, &MainWindow::reset_to_defaults);
    reset_defaults_action_->setObjectName(QStringLiteral("reset_defaults_action"));
    undo_reset_action_ = settings_menu->addAction(QString(), this, &MainWindow::undo_reset);
    undo_reset_action_->setObjectName(QStringLiteral("undo_reset_action"));
    undo_reset_action_->setEnabled(false);
    undo_reset_button_ = new QPushButton;
    undo_reset_button_->setObjectName(QStringLiteral("undo_reset_button"));
    connect(undo_reset_button_, &QPushButton::clicked, this, &MainWindow::undo_reset);
    statusBar()->addPermanentWidget(undo_reset_button_);
    undo_reset_button_->hide();
    settings_menu->addSeparator();
    auto* language_menu = settings_menu->addMenu(QString());
    language_menu->setObjectName(QStringLiteral("language_menu"));
    texts_.add([=, this] {
        settings_menu->setTitle(tr("Se&ttings"));
        reset_defaults_action_->setText(tr("&Reset to defaults"));
        reset_defaults_action_->setToolTip(tr("Set every field of the configuration to its default (Undo brings them back)"));
        undo_reset_action_->setText(tr("&Undo reset to defaults"));
        undo_reset_button_->setText(tr("Undo"));
        undo_reset_button_->setToolTip(tr("Bring back the configuration from before Reset to defaults"));
        language_menu->setTitle(tr("&Language"));
    });
    auto* group = new QActionGroup(this);
    const auto current = current_language();
    for (const auto& [code, name] : available_languages()) {
        auto* action = language_menu->addAction(name);
        action->setObjectName(QStringLiteral("language_") + code);
        action->setCheckable(true);
        action->setChecked(code == current);
        action->setData(code);
        group->addAction(action);
        // The switch is live: every widget sets its texts again (changeEvent), and
        // the choice is kept for the next start.
        connect(action, &QAction::triggered, this, [this, code = code, action] {
            if (code == current_language()) return;
            if (!install_translators(*QCoreApplication::instance(), code)) {
                const auto why = tr("No translation for %1 in %2").arg(action->text(), translations_directory());
                statusBar()->showMessage(why, 10000);
                QMessageBox::warning(this, tr("Language"), why);
                for (auto* other : action->actionGroup()->actions())
                    other->setChecked(other->data().toString() == current_language());
                return;
            }
            set_configured_language(code);
        });
    }
}

void MainWindow::build_help_menu() {
    auto* help = menuBar()->addMenu(QString());
    auto* shortcuts = help->addAction(QString(), this, [this] {
        auto* dialog = make_shortcuts_dialog(this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
    shortcuts->setObjectName(QStringLiteral("shortcuts_action"));
    shortcuts->setShortcut(QKeySequence(Qt::Key_F1));
    texts_.add([help, shortcuts] {
        help->setTitle(tr("&Help"));
        shortcuts->setText(tr("&Keyboard shortcuts…"));
        shortcuts->setToolTip(tr("Every key of the studio, read from its menus and buttons (F1)"));
    });
}

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
    if (threads_count_ > 0) threads_label_->setText(threads_text(threads_count_));
    fit_status_labels();
    if (last_step_.step > 0) {
        status_clock_.invalidate();
        refresh_views(true);
    }
    if (live_run_.has_summary && !controller_->is_running()) {
        eta_label_->setText(tr("took %1").arg(format_duration(live_run_.summary.train_runtime_s)));
        if (live_run_.summary.samples_per_second > 0)
            speed_label_->setText(tr("%1 samples/s").arg(live_run_.summary.samples_per_second, 0, 'f', 0));
    }
    update_config_summary();
    update_config_problems();
}

void MainWindow::show_refusal(const QString& why) {
    // The status line beside the progress bar wraps the whole message; the status
    // bar's line, which cuts a long one, gets it too for the other tabs.
    const auto text = [why] { return tr("Not started: %1").arg(why); };
    set_status(text, text);
    statusBar()->showMessage(text(), 10000);
}

void MainWindow::on_records(const RecordBatch& batch) {
    code_panel_->append(batch);
    if (!batch.run_directory.isEmpty()) live_run_.folder = batch.run_directory;
    live_run_.steps.insert(live_run_.steps.end(), batch.steps.begin(), batch.steps.end());
    for (const auto& m : batch.memory) live_run_.note_memory(m);
    live_run_.evals.insert(live_run_.evals.end(), batch.evals.begin(), batch.evals.end());
    loss_plot_->append(batch);
    memory_plot_->append(batch);
    pending_logs_ << batch.logs;
    for (const auto& line : batch.logs) show_threads(line);
    for (const auto& e : batch.evals) {
        const int row = eval_table_->rowCount();
        eval_table_->insertRow(row);
        const QStringList cells = {QString::number(e.epoch, 'f', 2), QString::number(e.step),
                                   QString::number(e.eval_loss, 'f', 4), QString::number(e.eval_accuracy, 'f', 4),
                                   QString::number(e.eval_f1, 'f', 4)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment(Qt::AlignCenter);
            eval_table_->setItem(row, c, item);
        }
    }
    if (!batch.steps.empty()) last_step_ = batch.steps.back();
}

void MainWindow::show_threads(const QString& log_line) {
    // The engine's lines: "threads: 2 (LibTorch's pool 2, BLAS 1), the default for
    // this model on 2 cores; …" at the start, "threads: now 1 (was 2), other
    // programs using 1.0 cores; …" when it changes the count (run_context.cpp).
    static const QRegularExpression threads(QStringLiteral("^threads: (now |kept )?(\\d+)"));
    const auto m = threads.match(log_line);
    if (!m.hasMatch()) return;
    threads_count_ = m.captured(2).toInt();
    threads_label_->setText(threads_text(threads_count_));
    threads_label_->setToolTip(log_line);
    // A change mid-run says why where the eye is, for a while.
    if (m.captured(1) == QLatin1String("now ")) statusBar()->showMessage(log_line, 10000);
}

void MainWindow::on_refresh_timer() {
    refresh_views(false);
    refresh_timer_.setInterval(refresh_budget_.interval_after_redraw(refresh_timer_.interval()));
}

void MainWindow::refresh_views(bool final) {
    code_panel_->refresh();
    loss_plot_->refresh();
    memory_plot_->refresh();
    if (!pending_logs_.isEmpty()) {
        const bool follow = log_follow_;
        log_view_->appendPlainText(pending_logs_.join(QLatin1Char('\n')));
        pending_logs_.clear();
        if (follow) {
            auto* bar = log_view_->verticalScrollBar();
            bar->setValue(bar->maximum());
            log_follow_ = true;
        }
    }
    if (last_step_.step <= 0) return;
    if (!final && status_clock_.isValid() && status_clock_.elapsed() < 250) return;
    status_clock_.start();
    const auto& c = running_config_;
    double fraction = 0.0;
    if (c.max_steps > 0) fraction = double(last_step_.step) / double(c.max_steps);
    if (c.epochs > 0) fraction = std::max(fraction, last_step_.epoch / double(c.epochs));
    if (c.max_steps > 0 && c.epochs > 0)
        fraction = std::max(double(last_step_.step) / double(c.max_steps), last_step_.epoch / double(c.epochs));
    fraction = std::clamp(fraction, 0.0, 1.0);
    progress_->setValue(static_cast<int>(std::lround(fraction * 1000)));
    step_label_->setText(tr("Step %1").arg(last_step_.step));
    epoch_label_->setText(tr("Epoch %1").arg(last_step_.epoch, 0, 'f', 2));
    const double rate = last_step_.elapsed_s > 0 ? last_step_.samples_seen / last_step_.elapsed_s : 0.0;
    speed_label_->setText(tr("%1 samples/s").arg(rate, 0, 'f', 0));
    if (fraction > 0.0 && controller_->is_running())
        eta_label_->setText(tr("ETA %1").arg(format_duration(last_step_.elapsed_s * (1.0 - fraction) / fraction)));
}

void MainWindow::on_finished(const accum::SummaryRecord& summary) {
    last_summary_ = summary;
    refresh_timer_.stop();
    live_run_.summary = summary;
    live_run_.has_summary = true;
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
        memory_plot_->mark_out_of_memory(summary.peak_memory_bytes);
        oom_banner_->show_for(summary, running_config_.batch_size, running_config_.accumulation_steps,
                              lesson_panel_->running_lever());
    }
    refresh_views(true); // the last records
    if (summary.status == accum::RunStatus::Completed) progress_->setValue(progress_->maximum());
    eta_label_->setText(tr("took %1").arg(format_duration(summary.train_runtime_s)));
    if (summary.samples_per_second > 0)
        speed_label_->setText(tr("%1 samples/s").arg(summary.samples_per_second, 0, 'f', 0));
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
    runs_panel_->add_run(live_run_);
    config_panel_->refresh_estimate_a_run_held();
    Q_EMIT run_finished(summary);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
