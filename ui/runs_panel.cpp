#include "runs_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "lab_stats.h"
#include "noise_scale.h"
#include "plot_interaction.h"
#include "runs_folder.h"

namespace studio {

namespace {

QString style_name(accum::Mode mode) {
    switch (mode) {
    case accum::Mode::Accelerator: return RunsPanel::tr("Accelerator");
    case accum::Mode::Trainer: return RunsPanel::tr("Trainer");
    case accum::Mode::Pytorch: break;
    }
    return RunsPanel::tr("PyTorch loop");
}

QString status_name(const RunResult& r) {
    if (!r.has_summary) return RunsPanel::tr("Incomplete");
    switch (r.summary.status) {
    case accum::RunStatus::Completed: return RunsPanel::tr("Completed");
    case accum::RunStatus::Stopped: return RunsPanel::tr("Stopped");
    case accum::RunStatus::OutOfMemory: return RunsPanel::tr("Out of memory");
    case accum::RunStatus::Diverged: return RunsPanel::tr("Diverged");
    case accum::RunStatus::Error: return RunsPanel::tr("Error");
    }
    return {};
}

QString num(double v, int precision) { return std::isfinite(v) ? QString::number(v, 'f', precision) : QStringLiteral("–"); }

QString model_name(const accum::RunConfig& c) {
    if (c.model == accum::ModelKind::File) return QFileInfo(QString::fromStdString(c.model_file)).fileName();
    return QString::fromStdString(accum::to_string(c.model));
}

QString data_name(const accum::RunConfig& c) {
    const auto dataset = QString::fromStdString(accum::to_string(c.dataset));
    if (c.data_path.empty()) return dataset;
    return QStringLiteral("%1 (%2)").arg(dataset, QFileInfo(QString::fromStdString(c.data_path)).fileName());
}

// The folder as the person typed it, made absolute and clean ("" stays "").
QString clean_folder(const QString& folder) {
    const auto trimmed = folder.trimmed();
    return trimmed.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(trimmed).absoluteFilePath());
}

// One value per step of the quantity shown, at the samples seen so far; a step
// without a value (no time passed since the previous one) gives none.
void curve_of(const RunResult& r, RunsPanel::Quantity quantity, QVector<double>& x, QVector<double>& y) {
    std::int64_t previous_samples = 0;
    double previous_s = 0.0;
    for (const auto& s : r.steps) {
        double value = s.loss;
        if (quantity == RunsPanel::Quantity::PeakMemory) {
            value = double(s.peak_memory_bytes) / (1024.0 * 1024.0);
        } else if (quantity == RunsPanel::Quantity::Throughput) {
            const double seconds = s.elapsed_s - previous_s;
            const auto samples = s.samples_seen - previous_samples;
            previous_s = s.elapsed_s;
            previous_samples = s.samples_seen;
            if (seconds <= 0.0 || samples <= 0) continue;
            value = double(samples) / seconds;
        }
        x << double(s.samples_seen);
        y << value;
    }
}

} // namespace

RunsPanel::RunsPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("runs_panel"));
    open_ = new QPushButton;
    open_->setObjectName(QStringLiteral("open_run_directory"));
    connect(open_, &QPushButton::clicked, this, &RunsPanel::open_dialog);
    delete_ = new QPushButton;
    delete_->setObjectName(QStringLiteral("delete_runs"));
    delete_->setEnabled(false);
    connect(delete_, &QPushButton::clicked, this, &RunsPanel::delete_selected);
    hint_ = new QLabel;
    hint_->setObjectName(QStringLiteral("runs_hint"));
    hint_->setWordWrap(true);
    // A long folder name wraps or is cut here, never widens the window.
    hint_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    quantity_ = new QComboBox;
    quantity_->setObjectName(QStringLiteral("runs_quantity"));
    for (const auto q : {Quantity::Loss, Quantity::PeakMemory, Quantity::Throughput}) quantity_->addItem(QString(), int(q));
    connect(quantity_, &QComboBox::currentIndexChanged, this, [this](int index) {
        quantity_shown_ = Quantity(quantity_->itemData(index).toInt());
        rebuild_plot();
    });

    table_ = new QTableWidget(0, Columns);
    table_->setObjectName(QStringLiteral("runs_table"));

    // Every column as wide as its text (the table scrolls sideways when narrow),
    // the last one taking what is left.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setTextElideMode(Qt::ElideMiddle); // a run's name and path end in what tells them apart
    table_->setWordWrap(false);                // (a wrapped cell is cut at the end of its first line)
    connect(table_, &QTableWidget::itemChanged, this, &RunsPanel::on_item_changed);
    connect(table_, &QTableWidget::itemSelectionChanged, this, &RunsPanel::update_delete_button);
    connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row >= 0 && row < run_count()) Q_EMIT run_chosen(row);
    });

    plot_ = new QCustomPlot;
    plot_->setObjectName(QStringLiteral("runs_plot"));
    plot_->legend->setVisible(false); // no run yet
    plot_->legend->setFont(font());
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    texts_.add([this] {
        open_->setText(tr("Open run directory…"));
        open_->setToolTip(tr("A directory written by accum-run --output-dir (accum_config.json + metrics.jsonl)"));
        delete_->setText(tr("Delete…"));
        delete_->setToolTip(tr("Delete the selected runs' folders from the disk (after asking)"));
        quantity_->setItemText(0, tr("Loss"));
        quantity_->setItemText(1, tr("Peak memory"));
        quantity_->setItemText(2, tr("Throughput"));
        quantity_->setToolTip(tr("What the plot shows of each ticked run, step by step"));
        table_->setHorizontalHeaderLabels({tr("Run"), tr("Source"), tr("Date"), tr("Style"), tr("B"), tr("K"),
                                           tr("Effective"), tr("Noise scale"), tr("Status"), tr("Final loss"), tr("Accuracy"),
                                           tr("Peak memory"), tr("Samples/s"), tr("Model"), tr("Data")});
        plot_->xAxis->setLabel(tr("samples seen"));
        plot_->yAxis->setLabel(tr("loss (window mean)"));
    });
    look_.capture(plot_);

    folder_timer_.setSingleShot(true);
    folder_timer_.setInterval(500); // a folder being typed is listed once the typing pauses
    connect(&folder_timer_, &QTimer::timeout, this, [this] { set_runs_folder(pending_folder_); });

    auto* top = new QHBoxLayout;
    top->addWidget(hint_, 1);
    top->addWidget(quantity_);
    top->addWidget(open_);
    top->addWidget(delete_);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table_);
    split->addWidget(plot_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    update_hint();
}

void RunsPanel::add_run(const RunResult& r, bool ticked) {
    // A run already listed from its folder (opened again) is that row, now read whole.
    if (!r.folder.isEmpty()) {
        const auto folder = clean_folder(r.folder);
        for (int row = 0; row < run_count(); ++row) {
            auto& e = entries_[static_cast<std::size_t>(row)];
            if (clean_folder(e.run.folder) != folder) continue;
            e.run = r;
            e.loaded = true; // config_read stays the listing's: the same record, read or not
            e.ticked = e.ticked || ticked;
            fill_row(row);
            rebuild_plot();
            return;
        }
    }
    Entry e;
    e.run = r;
    e.ticked = ticked;
    e.started = r.folder.isEmpty() ? QDateTime::currentDateTime() : run_started(r.folder);
    entries_.push_back(std::move(e));
    table_->insertRow(table_->rowCount());
    fill_row(run_count() - 1);
    rebuild_plot();
}

bool RunsPanel::open_directory(const QString& dir, QString* error) {
    const auto run = load_run_directory(dir, error);
    if (!run) return false;
    add_run(*run, true);
    for (int row = run_count() - 1; row >= 0; --row)
        if (clean_folder(entry(row).run.folder) == clean_folder(run->folder)) {
            Q_EMIT run_chosen(row); // the planner takes its noise scale
            break;
        }
    return true;
}

void RunsPanel::set_ticked(int row, bool ticked) {
    if (auto* item = table_->item(row, 0)) item->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
}

void RunsPanel::set_quantity(Quantity quantity) { quantity_->setCurrentIndex(quantity_->findData(int(quantity))); }

void RunsPanel::follow_runs_folder(const QString& folder) {
    pending_folder_ = folder;
    if (clean_folder(folder) == runs_folder_) {
        folder_timer_.stop();
        return;
    }
    folder_timer_.start();
}

void RunsPanel::set_runs_folder(const QString& folder) {
    folder_timer_.stop();
    const auto clean = clean_folder(folder);
    if (clean != runs_folder_) {
        runs_folder_ = clean;
        // The earlier sessions' runs of the folder listed before go; this session's stay.
        std::vector<Entry> listed;
        for (const auto& dir : run_directories_in(runs_folder_)) {
            const bool session = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
                return !e.earlier && clean_folder(e.run.folder) == dir;
            });
            if (session) continue;
            auto found = read_listed_run(dir);
            Entry e;
            e.run = std::move(found.run);
            e.earlier = true;
            e.loaded = false;
            e.config_read = found.config_read;
            e.problem = found.problem;
            e.started = found.started;
            listed.push_back(std::move(e));
        }
        std::stable_sort(listed.begin(), listed.end(),
                         [](const Entry& a, const Entry& b) { return a.started < b.started; });
        for (auto& e : entries_)
            if (!e.earlier) listed.push_back(std::move(e));
        entries_ = std::move(listed);
        refill_table();
        rebuild_plot();
        update_hint();
    }
    Q_EMIT runs_folder_listed();
}

void RunsPanel::fill_row(int row) {
    const auto& e = entry(row);
    const auto& r = e.run;
    const auto& c = r.config;
    const auto unknown = QStringLiteral("–");
    const auto known = [&](const QString& text) { return e.config_read ? text : unknown; };
    const QString source = e.earlier                             ? tr("saved")
                           : r.source == QLatin1String("live") ? tr("live")
                           : r.source == QLatin1String("lab")  ? tr("lab")
                                                                : r.source;
    QStringList cells;
    cells.resize(Columns);
    cells[Name] = r.label;
    cells[Source] = source;
    cells[Style] = known(style_name(c.mode));
    cells[B] = known(QString::number(c.batch_size));
    cells[K] = known(QString::number(c.accumulation_steps));
    cells[Effective] = known(QString::number(c.effective_batch()));
    cells[NoiseScale] = noise_figure(measured_noise_scale(r)); // "–" when it measured none
    cells[Status] = e.problem.isEmpty() ? status_name(r) : tr("Damaged");
    // A listed run without summary.json: its last whole step's loss, read from metrics.jsonl's end.
    cells[FinalLoss] = num(!r.has_summary && r.steps.empty() ? r.summary.final_loss : r.final_loss(), 4);
    cells[Accuracy] = num(r.final_accuracy(), 4);
    cells[PeakMemory] = r.summary.peak_memory_bytes > 0 ? format_bytes(r.summary.peak_memory_bytes) : unknown;
    cells[SamplesPerSecond] = r.summary.samples_per_second > 0 ? num(r.summary.samples_per_second, 0) : unknown;
    cells[Model] = known(model_name(c));
    cells[Data] = known(data_name(c));
    cells[Date] = e.started.isValid() ? e.started.toString(QStringLiteral("yyyy-MM-dd HH:mm")) : unknown;

    const bool was_filling = filling_;
    filling_ = true;
    for (int col = 0; col < Columns; ++col) {
        auto* item = new QTableWidgetItem(cells[col]);
        if (col == Name) {
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(e.ticked ? Qt::Checked : Qt::Unchecked);
            item->setForeground(run_colour(row));
            if (!r.folder.isEmpty()) item->setToolTip(r.folder);
        } else {
            item->setTextAlignment(Qt::AlignCenter);
        }
        if (col == Source) item->setToolTip(r.folder.isEmpty() ? r.source : r.folder);
        if (col == Status && !e.problem.isEmpty()) item->setToolTip(e.problem);
        if (col == Status && e.problem.isEmpty() && !r.has_summary)
            item->setToolTip(tr("No summary: the run was stopped before its end (killed, or still running)"));
        table_->setItem(row, col, item);
    }
    filling_ = was_filling;
}

void RunsPanel::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) retranslate();
}

void RunsPanel::retranslate() {
    texts_.apply();
    refill_table();
    update_hint();
    rebuild_plot();
}

void RunsPanel::refill_table() {
    filling_ = true;
    table_->setUpdatesEnabled(false);
    table_->clearContents();
    table_->setRowCount(run_count());
    for (int row = 0; row < run_count(); ++row) fill_row(row);
    table_->setUpdatesEnabled(true);
    filling_ = false;
    update_delete_button();
}

int RunsPanel::plotted_points(int row) const {
    if (row < 0 || row >= int(graph_of_row_.size()) || graph_of_row_[static_cast<std::size_t>(row)] < 0) return 0;
    return plot_->graph(graph_of_row_[static_cast<std::size_t>(row)])->dataCount();
}

void RunsPanel::open_dialog() {
    const auto dir = QFileDialog::getExistingDirectory(this, tr("Open run directory"), runs_folder_);
    if (dir.isEmpty()) return;
    QString error;
    if (!open_directory(dir, &error)) QMessageBox::warning(this, tr("Open run directory"), error);
}

void RunsPanel::on_item_changed(QTableWidgetItem* item) {
    if (filling_ || !item || item->column() != Name) return;
    const int row = item->row();
    auto& e = entries_[static_cast<std::size_t>(row)];
    e.ticked = item->checkState() == Qt::Checked;
    if (e.ticked && !e.loaded) {
        // The curves of a listed run are read when it is first shown.
        e.loaded = true;
        QString error;
        if (const auto whole = load_run_directory(e.run.folder, &error)) {
            e.run.steps = whole->steps;
            e.run.evals = whole->evals;
            e.run.parameters_bytes = whole->parameters_bytes;
            e.run.gradients_bytes = whole->gradients_bytes;
            e.run.optimizer_state_bytes = whole->optimizer_state_bytes;
        } else if (e.problem.isEmpty()) {
            e.problem = error;
        }
        // The other cells of the row are updated; `item` itself is still being changed.
        filling_ = true;
        table_->item(row, Accuracy)->setText(num(e.run.final_accuracy(), 4));
        if (!e.problem.isEmpty()) {
            table_->item(row, Status)->setText(tr("Damaged"));
            table_->item(row, Status)->setToolTip(e.problem);
        }
        filling_ = false;
    }
    rebuild_plot();
}

void RunsPanel::update_delete_button() {
    bool any = false;
    for (const auto& index : table_->selectionModel()->selectedRows())
        any = any || looks_like_run(entry(index.row()).run.folder);
    delete_->setEnabled(any);
}

void RunsPanel::update_hint() {
    if (runs_folder_.isEmpty()) {
        hint_->setText(tr("This session's runs; runs are not saved (Settings: Save runs in). "
                          "Tick runs to overlay their curves."));
        hint_->setToolTip({});
    } else {
        // Under the home folder, shown from ~ (the rest is what tells folders apart).
        const auto home = QDir::homePath();
        const bool in_home = runs_folder_.startsWith(home + QLatin1Char('/'));
        const auto shown = in_home ? QStringLiteral("~") + runs_folder_.mid(home.size()) : runs_folder_;
        hint_->setText(tr("This session's runs and those saved in %1. Tick runs to overlay their curves.")
                           .arg(QDir::toNativeSeparators(shown)));
        hint_->setToolTip(QDir::toNativeSeparators(runs_folder_));
    }
}

bool RunsPanel::delete_runs(QList<int> rows, QString* error) {
    std::sort(rows.begin(), rows.end(), std::greater<>());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    QStringList problems;
    for (const int row : rows) {
        if (row < 0 || row >= run_count()) continue;
        const auto folder = entry(row).run.folder;
        QString why;
        if (folder.isEmpty()) why = tr("%1 has no folder: nothing to delete").arg(entry(row).run.label);
        if (!folder.isEmpty() && !delete_run_directory(folder, &why)) why = why.isEmpty() ? folder : why;
        if (!why.isEmpty()) {
            problems << why;
            continue;
        }
        entries_.erase(entries_.begin() + row);
    }
    refill_table();
    rebuild_plot();
    if (error) *error = problems.join(QLatin1Char('\n'));
    return problems.isEmpty();
}

void RunsPanel::delete_selected() {
    QList<int> rows;
    QStringList folders;
    for (const auto& index : table_->selectionModel()->selectedRows()) {
        const auto& folder = entry(index.row()).run.folder;
        if (!looks_like_run(folder)) continue;
        rows << index.row();
        folders << QDir::toNativeSeparators(folder);
    }
    if (rows.isEmpty()) return;
    std::sort(folders.begin(), folders.end());
    constexpr int kNamed = 10; // the question stays on the screen
    if (folders.size() > kNamed) {
        const auto more = folders.size() - kNamed;
        folders = folders.mid(0, kNamed);
        folders << tr("and %n more", nullptr, int(more));
    }
    const auto question = tr("Delete %n run(s)? Their folders are removed from the disk:", nullptr, int(rows.size())) +
                          QStringLiteral("\n\n") + folders.join(QLatin1Char('\n'));
    const bool yes = confirm_ ? confirm_(question)
                              : QMessageBox::question(this, tr("Delete runs"), question,
                                                      QMessageBox::Yes | QMessageBox::Cancel,
                                                      QMessageBox::Cancel) == QMessageBox::Yes;
    if (!yes) return;
    QString error;
    if (!delete_runs(rows, &error)) QMessageBox::warning(this, tr("Delete runs"), error);
}

void RunsPanel::set_presentation_scale(double scale) {
    look_.apply(scale);
    PlotLook::legend_below(plot_, scale > 1.0, 2); // kept, outside the curves
    rebuild_plot();
}

void RunsPanel::rebuild_plot() {
    plot_->clearGraphs();
    graph_of_row_.assign(entries_.size(), -1);
    switch (quantity_shown_) {
    case Quantity::Loss: plot_->yAxis->setLabel(tr("loss (window mean)")); break;
    case Quantity::PeakMemory: plot_->yAxis->setLabel(tr("peak memory (MiB)")); break;
    case Quantity::Throughput: plot_->yAxis->setLabel(tr("throughput (samples/s)")); break;
    }
    for (int row = 0; row < run_count(); ++row) {
        const auto& e = entry(row);
        if (!e.ticked) continue;
        auto* g = plot_->addGraph();
        g->setName(e.run.label);
        g->setPen(QPen(run_colour(row), 2.0 * look_.scale()));
        QVector<double> x, y;
        curve_of(e.run, quantity_shown_, x, y);
        g->setData(x, y, true);
        graph_of_row_[static_cast<std::size_t>(row)] = plot_->graphCount() - 1;
    }
    // Framed like the live loss plot: the values shown with a margin (0 only when
    // near), the legend naming the runs where no point is, and none without a run.
    QCPRange keys, values;
    const bool any = graphs_extent(plot_, plot_->yAxis, &keys, &values);
    plot_->legend->setVisible(any);
    if (any) {
        lay_out(plot_);
        const QRect area = plot_->axisRect()->rect();
        if (keys.size() <= 0) keys = QCPRange(keys.lower - 0.5, keys.upper + 0.5);
        plot_->xAxis->setRange(with_room(keys, 3.0 * look_.scale(), area.width(), false));
        plot_->yAxis->setRange(with_room(framed_range(values.lower, values.upper), 3.0 * look_.scale(), area.height()));
        legend_to_free_corner(plot_, {Qt::Alignment(Qt::AlignTop | Qt::AlignRight),
                                      Qt::Alignment(Qt::AlignBottom | Qt::AlignLeft),
                                      Qt::Alignment(Qt::AlignTop | Qt::AlignLeft),
                                      Qt::Alignment(Qt::AlignBottom | Qt::AlignRight)});
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
