#include "runs_panel.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <qcustomplot.h>

#include "lab_panel.h"
#include "plot_interaction.h"

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

QColor colour_for(int row) {
    static const QList<QColor> colours = {QColor(0x1f77b4), QColor(0xd62728), QColor(0x2ca02c), QColor(0x9467bd),
                                          QColor(0xff7f0e), QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf)};
    return colours[row % colours.size()];
}

} // namespace

RunsPanel::RunsPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("runs_panel"));
    open_ = new QPushButton(tr("Open run directory…"));
    open_->setObjectName(QStringLiteral("open_run_directory"));
    open_->setToolTip(tr("A directory written by accum-run --output-dir (config.json + metrics.jsonl)"));
    connect(open_, &QPushButton::clicked, this, &RunsPanel::open_dialog);
    auto* hint = new QLabel(tr("Every run of this session. Tick runs to overlay their loss curves."));

    table_ = new QTableWidget(0, 11);
    table_->setObjectName(QStringLiteral("runs_table"));
    table_->setHorizontalHeaderLabels({tr("Run"), tr("Source"), tr("Style"), tr("B"), tr("K"), tr("Effective"),
                                       tr("Status"), tr("Final loss"), tr("Accuracy"), tr("Peak memory"),
                                       tr("Samples/s")});
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setTextElideMode(Qt::ElideMiddle); // a run's name and path end in what tells them apart
    table_->setWordWrap(false);                // (a wrapped cell is cut at the end of its first line)
    connect(table_, &QTableWidget::itemChanged, this, &RunsPanel::on_item_changed);

    plot_ = new QCustomPlot;
    plot_->setObjectName(QStringLiteral("runs_plot"));
    plot_->legend->setVisible(false); // no run yet
    plot_->legend->setFont(font());
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->xAxis->setLabel(tr("samples seen"));
    plot_->yAxis->setLabel(tr("loss (window mean)"));
    look_.capture(plot_);

    auto* top = new QHBoxLayout;
    top->addWidget(hint, 1);
    top->addWidget(open_);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table_);
    split->addWidget(plot_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
}

void RunsPanel::add_run(const RunResult& r, bool ticked) {
    runs_.push_back(r);
    const int row = table_->rowCount();
    filling_ = true;
    table_->insertRow(row);
    const auto& c = r.config;
    const QStringList cells = {r.label,
                               r.source == QLatin1String("live") ? tr("live")
                               : r.source == QLatin1String("lab") ? tr("lab")
                                                                  : r.source,
                               style_name(c.mode),
                               QString::number(c.batch_size),
                               QString::number(c.accumulation_steps),
                               QString::number(c.effective_batch()),
                               status_name(r),
                               num(r.final_loss(), 4),
                               num(r.final_accuracy(), 4),
                               format_bytes(r.summary.peak_memory_bytes),
                               num(r.summary.samples_per_second, 0)};
    for (int col = 0; col < cells.size(); ++col) {
        auto* item = new QTableWidgetItem(cells[col]);
        if (col == 0) {
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
            item->setForeground(colour_for(row));
        } else {
            item->setTextAlignment(Qt::AlignCenter);
        }
        if (col == 1) item->setToolTip(r.source);
        table_->setItem(row, col, item);
    }
    filling_ = false;
    rebuild_plot();
}

bool RunsPanel::open_directory(const QString& dir, QString* error) {
    const auto run = load_run_directory(dir, error);
    if (!run) return false;
    add_run(*run, true);
    return true;
}

void RunsPanel::set_ticked(int row, bool ticked) {
    if (auto* item = table_->item(row, 0)) item->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
}

int RunsPanel::plotted_points(int row) const {
    if (row < 0 || row >= int(graph_of_row_.size()) || graph_of_row_[static_cast<std::size_t>(row)] < 0) return 0;
    return plot_->graph(graph_of_row_[static_cast<std::size_t>(row)])->dataCount();
}

void RunsPanel::open_dialog() {
    const auto dir = QFileDialog::getExistingDirectory(this, tr("Open run directory"), QString());
    if (dir.isEmpty()) return;
    QString error;
    if (!open_directory(dir, &error)) QMessageBox::warning(this, tr("Open run directory"), error);
}

void RunsPanel::on_item_changed(QTableWidgetItem* item) {
    if (!filling_ && item && item->column() == 0) rebuild_plot();
}

void RunsPanel::set_presentation_scale(double scale) {
    look_.apply(scale);
    PlotLook::legend_below(plot_, scale > 1.0, 2); // kept, outside the curves
    rebuild_plot();
}

void RunsPanel::rebuild_plot() {
    plot_->clearGraphs();
    graph_of_row_.assign(runs_.size(), -1);
    for (int row = 0; row < int(runs_.size()); ++row) {
        const auto* item = table_->item(row, 0);
        if (!item || item->checkState() != Qt::Checked) continue;
        const auto& r = runs_[static_cast<std::size_t>(row)];
        auto* g = plot_->addGraph();
        g->setName(r.label);
        g->setPen(QPen(colour_for(row), 2.0 * look_.scale()));
        QVector<double> x, y;
        for (const auto& s : r.steps) {
            x << double(s.samples_seen);
            y << s.loss;
        }
        g->setData(x, y, true);
        graph_of_row_[static_cast<std::size_t>(row)] = plot_->graphCount() - 1;
    }
    // Framed like the live loss plot: the losses shown with a margin (0 only when
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
