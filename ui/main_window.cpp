#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextStream>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "code_panel.h"
#include "config_panel.h"
#include "lab_panel.h"
#include "language.h"
#include "runs_panel.h"
#include "loss_plot.h"
#include "memory_plot.h"
#include "oom_banner.h"
#include "run_controller.h"

namespace studio {

namespace {

QSettings studio_settings() { return QSettings(QStringLiteral("AccumulateStudio"), QStringLiteral("accum-studio")); }

QString format_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("–");
    const auto s = static_cast<qint64>(std::llround(seconds));
    if (s >= 3600) return QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString status_text(accum::RunStatus status) {
    switch (status) {
    case accum::RunStatus::Completed: return QObject::tr("Completed");
    case accum::RunStatus::Stopped: return QObject::tr("Stopped");
    case accum::RunStatus::OutOfMemory: return QObject::tr("Out of memory");
    case accum::RunStatus::Diverged: return QObject::tr("Diverged");
    case accum::RunStatus::Error: return QObject::tr("Error");
    }
    return {};
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("Accumulate Studio — gradient accumulation, live"));
    controller_ = new RunController(this);
    build_layout();
    build_actions();

    connect(controller_, &RunController::records_ready, this, &MainWindow::on_records);
    connect(controller_, &RunController::finished, this, &MainWindow::on_finished);
    connect(controller_, &RunController::paused_changed, this, [this] { update_actions(); });
    connect(config_panel_, &ConfigPanel::validity_changed, this, [this] { update_actions(); });
    connect(config_panel_, &ConfigPanel::config_changed, this, [this] {
        if (!controller_->is_running()) code_panel_->set_style(QString::fromStdString(accum::to_string(config_panel_->config().mode)));
    });
    connect(code_panel_, &CodePanel::step_once_requested, this, &MainWindow::step_once);
    lab_panel_->set_base_config_provider([this] { return config_panel_->config(); });
    connect(lab_panel_, &LabPanel::run_finished, this, [this](const RunResult& r) { runs_panel_->add_run(r); });
    connect(lab_panel_, &LabPanel::busy_changed, this, [this] { update_actions(); });
    connect(lab_panel_, &LabPanel::experiment_finished, this, &MainWindow::experiment_finished);
    connect(oom_banner_, &OomBanner::apply_requested, this, [this](std::int64_t b, std::int64_t k) {
        config_panel_->set_batching(b, k);
        status_label_->setText(tr("Suggestion applied: %1 × %2. Press Run.").arg(b).arg(k));
    });

    // At most 10 replots a second: live enough to watch, and it leaves the CPU to
    // training (at 30 Hz the replots cost the engine a fifth of its speed on 2 cores).
    // During a run the interval stretches if drawing costs more than its budget
    // (refresh_budget.h).
    refresh_timer_.setInterval(RefreshBudget::kFastestMs);
    connect(&refresh_timer_, &QTimer::timeout, this, &MainWindow::on_refresh_timer);

    restore_settings();
    code_panel_->set_style(QString::fromStdString(accum::to_string(config_panel_->config().mode)));
    update_actions();
    resize(1500, 950);
}

MainWindow::~MainWindow() {
    controller_->shutdown();
    lab_panel_->queue()->controller()->shutdown();
}

void MainWindow::build_layout() {
    config_panel_ = new ConfigPanel;
    auto* scroll = new QScrollArea;
    scroll->setWidget(config_panel_);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(config_panel_->sizeHint().width() + 24);

    oom_banner_ = new OomBanner;
    loss_plot_ = new LossPlot;
    memory_plot_ = new MemoryPlot;

    eval_table_ = new QTableWidget(0, 5);
    eval_table_->setObjectName(QStringLiteral("eval_table"));
    eval_table_->setHorizontalHeaderLabels({tr("Epoch"), tr("Step"), tr("Eval loss"), tr("Accuracy"), tr("F1")});
    eval_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    eval_table_->verticalHeader()->setVisible(false);
    eval_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    eval_table_->setAlternatingRowColors(true);

    log_view_ = new QPlainTextEdit;
    log_view_->setObjectName(QStringLiteral("log_view"));
    log_view_->setReadOnly(true);
    log_view_->setMaximumBlockCount(2000);
    log_view_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    log_view_->setPlaceholderText(tr("The run's log, as the style's Python original would print it"));

    auto* bottom = new QSplitter(Qt::Horizontal);
    auto* eval_box = new QWidget;
    auto* eval_layout = new QVBoxLayout(eval_box);
    eval_layout->setContentsMargins(0, 0, 0, 0);
    auto* eval_title = new QLabel(tr("<b>Evaluation per epoch</b>"));
    eval_layout->addWidget(eval_title);
    eval_layout->addWidget(eval_table_);
    auto* log_box = new QWidget;
    auto* log_layout = new QVBoxLayout(log_box);
    log_layout->setContentsMargins(0, 0, 0, 0);
    log_layout->addWidget(new QLabel(tr("<b>Run log</b>")));
    log_layout->addWidget(log_view_);
    bottom->addWidget(eval_box);
    bottom->addWidget(log_box);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);

    auto* plots = new QSplitter(Qt::Vertical);
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
    status_label_ = new QLabel(tr("Ready"));
    status_label_->setObjectName(QStringLiteral("status_label"));
    status_label_->setStyleSheet(QStringLiteral("font-weight: bold;"));
    step_label_ = new QLabel;
    epoch_label_ = new QLabel;
    speed_label_ = new QLabel;
    eta_label_ = new QLabel;
    // Each label keeps one size, that of its widest text, so setting its text during
    // a run repaints the label alone. A label whose size hint follows its text asks
    // for a new layout of the whole window at each change, twice a second, and the
    // layout measures the text of every widget again, on the cores that train.
    const auto keep_size = [](QLabel* label, const QStringList& widest) {
        const QFontMetrics metrics(label->font());
        int width = 130;
        for (const auto& text : widest) width = std::max(width, metrics.horizontalAdvance(text) + 12);
        label->setFixedSize(width, metrics.height() + 6);
    };
    const QString long_duration = format_duration(99 * 3600 + 59 * 60 + 59);
    keep_size(step_label_, {tr("Step %1").arg(9999999)});
    keep_size(epoch_label_, {tr("Epoch %1").arg(9999.99, 0, 'f', 2)});
    keep_size(speed_label_, {tr("%1 samples/s").arg(9999999.0, 0, 'f', 0)});
    keep_size(eta_label_, {tr("ETA %1").arg(long_duration), tr("took %1").arg(long_duration)});
    auto* status_row = new QHBoxLayout;
    status_row->addWidget(status_label_);
    status_row->addWidget(progress_, 1);
    status_row->addWidget(step_label_);
    status_row->addWidget(epoch_label_);
    status_row->addWidget(speed_label_);
    status_row->addWidget(eta_label_);

    code_panel_ = new CodePanel;
    auto* live_split = new QSplitter(Qt::Horizontal);
    live_split->setObjectName(QStringLiteral("live_split"));
    live_split->addWidget(plots);
    live_split->addWidget(code_panel_);
    live_split->setStretchFactor(0, 3);
    live_split->setStretchFactor(1, 2);
    live_split->setSizes({600, 470});
    code_panel_->setMinimumWidth(400);

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
    tabs_->addTab(live, tr("Live run"));
    tabs_->addTab(lab_panel_, tr("Equivalence lab"));
    tabs_->addTab(runs_panel_, tr("Runs"));

    auto* right = new QWidget;
    auto* right_layout = new QVBoxLayout(right);
    right_layout->setContentsMargins(4, 0, 0, 0);
    right_layout->addWidget(tabs_, 1);

    auto* main_split = new QSplitter(Qt::Horizontal);
    main_split->addWidget(scroll);
    main_split->addWidget(right);
    main_split->setStretchFactor(0, 0);
    main_split->setStretchFactor(1, 1);
    setCentralWidget(main_split);
}

void MainWindow::build_actions() {
    auto* style = QApplication::style();
    run_action_ = new QAction(style->standardIcon(QStyle::SP_MediaPlay), tr("&Run"), this);
    run_action_->setObjectName(QStringLiteral("run_action"));
    run_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run_action_->setToolTip(tr("Start the run (Ctrl+R)"));
    pause_action_ = new QAction(style->standardIcon(QStyle::SP_MediaPause), tr("&Pause"), this);
    pause_action_->setObjectName(QStringLiteral("pause_action"));
    pause_action_->setShortcut(QKeySequence(Qt::Key_Space));
    pause_action_->setToolTip(tr("Pause or resume at the next micro-batch (Space)"));
    stop_action_ = new QAction(style->standardIcon(QStyle::SP_MediaStop), tr("&Stop"), this);
    stop_action_->setObjectName(QStringLiteral("stop_action"));
    stop_action_->setShortcut(QKeySequence(Qt::Key_Escape));
    stop_action_->setToolTip(tr("Stop at the next micro-batch (Esc)"));
    step_action_ = new QAction(style->standardIcon(QStyle::SP_MediaSkipForward), tr("Step one micro-batch"), this);
    step_action_->setObjectName(QStringLiteral("step_action"));
    step_action_->setShortcut(QKeySequence(Qt::Key_F10));
    step_action_->setToolTip(tr("While paused: run exactly one more micro-batch (F10)"));
    connect(step_action_, &QAction::triggered, this, &MainWindow::step_once);
    connect(run_action_, &QAction::triggered, this, &MainWindow::start_run);
    connect(pause_action_, &QAction::triggered, this, &MainWindow::toggle_pause);
    connect(stop_action_, &QAction::triggered, this, &MainWindow::stop_run);

    auto* toolbar = addToolBar(tr("Run"));
    toolbar->setObjectName(QStringLiteral("run_toolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->setMovable(false);
    toolbar->addAction(run_action_);
    toolbar->addAction(pause_action_);
    toolbar->addAction(stop_action_);
    toolbar->addAction(step_action_);

    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open configuration…"), QKeySequence::Open, this, &MainWindow::load_config_dialog);
    file->addAction(tr("&Save configuration…"), QKeySequence::Save, this, &MainWindow::save_config_dialog);
    file->addSeparator();
    file->addAction(tr("Export loss plot (PNG/PDF)…"), this, [this] { export_plot_dialog(true); });
    file->addAction(tr("Export memory plot (PNG/PDF)…"), this, [this] { export_plot_dialog(false); });
    file->addAction(tr("Export data (CSV)…"), this, &MainWindow::export_csv_dialog);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    auto* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(run_action_);
    run->addAction(pause_action_);
    run->addAction(stop_action_);
    run->addAction(step_action_);
    auto* lab = menuBar()->addMenu(tr("&Lab"));
    lab->addAction(tr("Compare styles"), this, [this] { run_demo(QStringLiteral("compare-styles")); });
    lab->addAction(tr("Compare accumulation"), this, [this] { run_demo(QStringLiteral("compare-accumulation")); });
    lab->addSeparator();
    lab->addAction(tr("Pitfall: BatchNorm"), this, [this] { run_demo(QStringLiteral("pitfall-batchnorm")); });
    lab->addAction(tr("Pitfall: mean vs token loss"), this, [this] { run_demo(QStringLiteral("pitfall-tokens")); });
    lab->addAction(tr("Pitfall: scheduler per micro-batch"), this,
                   [this] { run_demo(QStringLiteral("pitfall-scheduler")); });
    build_language_menu();
}

void MainWindow::build_language_menu() {
    auto* settings_menu = menuBar()->addMenu(tr("Se&ttings"));
    auto* language_menu = settings_menu->addMenu(tr("&Language"));
    language_menu->setObjectName(QStringLiteral("language_menu"));
    auto* group = new QActionGroup(this);
    const auto current = configured_language();
    for (const auto& [code, name] : available_languages()) {
        auto* action = language_menu->addAction(name);
        action->setObjectName(QStringLiteral("language_") + code);
        action->setCheckable(true);
        action->setChecked(code == current);
        action->setData(code);
        group->addAction(action);
        connect(action, &QAction::triggered, this, [this, code = code] {
            if (code == configured_language()) return;
            set_configured_language(code);
            const auto text = tr("The language changes when Accumulate Studio is restarted.");
            statusBar()->showMessage(text, 8000);
            QMessageBox::information(this, tr("Language"), text);
        });
    }
}

void MainWindow::update_actions() {
    const bool running = controller_->is_running();
    const bool lab_busy = lab_panel_ && lab_panel_->is_running();
    run_action_->setEnabled(!running && !lab_busy && config_panel_->is_valid());
    step_action_->setEnabled(running && controller_->is_paused());
    code_panel_->set_paused(controller_->is_paused(), running);
    for (auto e : {Experiment::CompareStyles, Experiment::CompareAccumulation, Experiment::PitfallBatchNorm,
                   Experiment::PitfallTokenLoss, Experiment::PitfallScheduler})
        if (auto* b = lab_panel_->button(e)) b->setEnabled(!running && !lab_busy);
    pause_action_->setEnabled(running);
    stop_action_->setEnabled(running);
    pause_action_->setText(controller_->is_paused() ? tr("Resume") : tr("&Pause"));
    pause_action_->setIcon(QApplication::style()->standardIcon(controller_->is_paused() ? QStyle::SP_MediaPlay
                                                                                         : QStyle::SP_MediaPause));
    config_panel_->setEnabled(!running && !lab_busy);
    if (running) status_label_->setText(controller_->is_paused() ? tr("Paused") : tr("Running"));
}

void MainWindow::start_run() {
    if (controller_->is_running() || !config_panel_->is_valid()) return;
    running_config_ = config_panel_->config();
    running_config_.record_micro_steps = true; // the faint per-micro-batch curve
    running_config_.quiet = true;
    store_settings();
    loss_plot_->set_micro_batch_size(running_config_.batch_size);
    loss_plot_->clear();
    memory_plot_->clear();
    eval_table_->setRowCount(0);
    log_view_->clear();
    oom_banner_->hide();
    last_step_ = accum::StepRecord{};
    last_summary_ = accum::SummaryRecord{};
    progress_->setValue(0);
    step_label_->clear();
    epoch_label_->clear();
    speed_label_->clear();
    eta_label_->clear();
    code_panel_->set_style(QString::fromStdString(accum::to_string(running_config_.mode)));
    code_panel_->start_run(static_cast<int>(running_config_.accumulation_steps),
                           static_cast<int>(std::lround(running_config_.micro_step_delay_s * 1000.0)));
    live_run_ = RunResult{};
    live_run_.config = running_config_;
    live_run_.source = QStringLiteral("live");
    live_run_.label = tr("run %1").arg(++live_run_count_);
    controller_->start(running_config_);
    refresh_timer_.setInterval(RefreshBudget::kFastestMs);
    refresh_budget_.start();
    refresh_timer_.start();
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
    status_label_->setText(tr("Stopping…"));
}

void MainWindow::step_once() {
    if (controller_->is_running() && controller_->is_paused()) controller_->step_once();
}

namespace {
// The lab experiments --demo NAME starts, in the order --help lists them.
const std::vector<std::pair<QString, Experiment>>& demo_experiments() {
    static const std::vector<std::pair<QString, Experiment>> experiments = {
        {QStringLiteral("compare-styles"), Experiment::CompareStyles},
        {QStringLiteral("compare-accumulation"), Experiment::CompareAccumulation},
        {QStringLiteral("pitfall-batchnorm"), Experiment::PitfallBatchNorm},
        {QStringLiteral("pitfall-tokens"), Experiment::PitfallTokenLoss},
        {QStringLiteral("pitfall-scheduler"), Experiment::PitfallScheduler},
    };
    return experiments;
}
} // namespace

QStringList MainWindow::demo_names() {
    QStringList names{QStringLiteral("code-panel")};
    for (const auto& [name, experiment] : demo_experiments()) names << name;
    return names;
}

bool MainWindow::run_demo(const QString& name) {
    if (name == QLatin1String("code-panel")) {
        tabs_->setCurrentIndex(0);
        start_run();
        return true;
    }
    const auto& experiments = demo_experiments();
    const auto it = std::find_if(experiments.begin(), experiments.end(),
                                 [&name](const auto& demo) { return demo.first == name; });
    if (it == experiments.end()) return false;
    if (controller_->is_running() || lab_panel_->is_running()) return true;
    tabs_->setCurrentWidget(lab_panel_);
    lab_panel_->run_experiment(it->second);
    return true;
}

void MainWindow::on_records(const RecordBatch& batch) {
    code_panel_->append(batch);
    live_run_.steps.insert(live_run_.steps.end(), batch.steps.begin(), batch.steps.end());
    live_run_.evals.insert(live_run_.evals.end(), batch.evals.begin(), batch.evals.end());
    loss_plot_->append(batch);
    memory_plot_->append(batch);
    pending_logs_ << batch.logs;
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

void MainWindow::on_refresh_timer() {
    refresh_views(false);
    refresh_timer_.setInterval(refresh_budget_.interval_after_redraw(refresh_timer_.interval()));
}

void MainWindow::refresh_views(bool final) {
    code_panel_->refresh();
    loss_plot_->refresh();
    memory_plot_->refresh();
    if (!pending_logs_.isEmpty()) {
        log_view_->appendPlainText(pending_logs_.join(QLatin1Char('\n')));
        pending_logs_.clear();
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
    if (summary.status == accum::RunStatus::OutOfMemory) {
        memory_plot_->mark_out_of_memory(summary.peak_memory_bytes);
        oom_banner_->show_for(QString::fromStdString(summary.message), running_config_.batch_size,
                              running_config_.accumulation_steps, summary.suggested_batch_size,
                              summary.suggested_accumulation_steps);
    }
    refresh_views(true); // the last records
    if (summary.status == accum::RunStatus::Completed) progress_->setValue(progress_->maximum());
    eta_label_->setText(tr("took %1").arg(format_duration(summary.train_runtime_s)));
    if (summary.samples_per_second > 0)
        speed_label_->setText(tr("%1 samples/s").arg(summary.samples_per_second, 0, 'f', 0));
    QString text = status_text(summary.status);
    if (summary.status == accum::RunStatus::Completed)
        text += tr(" — %1 optimizer steps, final loss %2").arg(summary.optimizer_steps).arg(summary.final_loss, 0, 'f', 4);
    else if (!summary.message.empty() && summary.status != accum::RunStatus::OutOfMemory)
        text += QStringLiteral(": ") + QString::fromStdString(summary.message);
    update_actions();
    status_label_->setText(text);
    status_label_->setToolTip(QString::fromStdString(summary.message));
    live_run_.summary = summary;
    live_run_.has_summary = true;
    runs_panel_->add_run(live_run_);
    Q_EMIT run_finished(summary);
}

bool MainWindow::save_config(const QString& path, QString* error) const {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        if (error) *error = file.errorString();
        return false;
    }
    file.write(QByteArray::fromStdString(accum::to_json_text(config_panel_->config())));
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
    const auto geometry = settings.value(QStringLiteral("geometry")).toByteArray();
    if (!geometry.isEmpty()) restoreGeometry(geometry);
}

void MainWindow::store_settings() const {
    auto settings = studio_settings();
    settings.setValue(QStringLiteral("last_config"), QString::fromStdString(accum::to_json_text(config_panel_->config())));
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
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
