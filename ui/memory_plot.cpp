#include "memory_plot.h"

#include "plot_interaction.h"
#include <QFileInfo>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>
#include <qcustomplot.h>

namespace studio {

namespace {
constexpr double mib = 1024.0 * 1024.0;
}

MemoryPlot::MemoryPlot(QWidget* parent) : QWidget(parent) {
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("memory_plot"));
    plot_->setMinimumHeight(140);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->plotLayout()->insertRow(0);
    title_ = new QCPTextElement(plot_, tr("CPU tensor memory"), QFont(font().family(), 12, QFont::Bold));
    plot_->plotLayout()->addElement(0, 0, title_);

    current_graph_ = plot_->addGraph();
    current_graph_->setName(tr("current"));
    current_graph_->setPen(QPen(QColor(46, 125, 50), 2));
    current_graph_->setBrush(QColor(46, 125, 50, 40));
    peak_graph_ = plot_->addGraph();
    peak_graph_->setName(tr("peak"));
    peak_graph_->setPen(QPen(QColor(123, 31, 162), 2, Qt::DashLine));
    reserved_graph_ = plot_->addGraph();
    reserved_graph_->setName(tr("reserved (caching allocator)"));
    reserved_graph_->setPen(QPen(QColor(120, 120, 120), 1.5, Qt::DotLine));
    reserved_graph_->removeFromLegend();
    budget_graph_ = plot_->addGraph();
    budget_graph_->setName(tr("budget"));
    budget_graph_->setPen(QPen(QColor(198, 40, 40), 2, Qt::DashDotLine));
    budget_graph_->removeFromLegend();
    oom_graph_ = plot_->addGraph();
    oom_graph_->setName(tr("out of memory"));
    oom_graph_->setLineStyle(QCPGraph::lsNone);
    oom_graph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCrossCircle, QPen(QColor(198, 40, 40), 3), QBrush(Qt::white), 16));
    oom_graph_->removeFromLegend();

    budget_line_ = new QCPItemStraightLine(plot_);
    budget_line_->setPen(budget_graph_->pen());
    budget_line_->setVisible(false);
    oom_label_ = new QCPItemText(plot_);
    oom_label_->setText(tr("out of memory"));
    oom_label_->setColor(QColor(198, 40, 40));
    oom_label_->setFont(QFont(font().family(), 11, QFont::Bold));
    // The marker is the last point in time: its label reads leftwards from it.
    oom_label_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    oom_label_->setPadding(QMargins(0, 0, 14, 8));
    oom_label_->setVisible(false);

    // Top left, in two columns: memory grows to the right and towards the budget, and
    // the out-of-memory mark sits at the right end of the budget line.
    place_legend(plot_, Qt::AlignTop | Qt::AlignLeft, 2);
    use_fast_drawing(plot_);
    plot_->xAxis->setLabel(tr("wall time (s)"));
    plot_->yAxis->setLabel(tr("MiB"));
    freeze_view_on_interaction(plot_, this, &auto_range_, [this] {
        dirty_ = true;
        refresh();
    });
    look_.capture(plot_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
}

void MemoryPlot::clear() {
    records_.clear();
    other_ranks_.clear();
    for (auto& [rank, graph] : rank_graphs_) plot_->removeGraph(graph);
    rank_graphs_.clear();
    oom_ = false;
    oom_peak_ = 0;
    auto_range_ = true;
    dirty_ = true;
    refresh();
}

void MemoryPlot::append(const RecordBatch& batch) {
    if (batch.memory.empty()) return;
    for (const auto& r : batch.memory) {
        if (r.rank == 0)
            records_.push_back(r);
        else
            other_ranks_[r.rank].push_back(r);
    }
    dirty_ = true;
}

void MemoryPlot::mark_out_of_memory(std::int64_t peak_bytes) {
    oom_ = true;
    oom_peak_ = peak_bytes;
    dirty_ = true;
}

int MemoryPlot::point_count() const { return current_graph_->dataCount(); }
bool MemoryPlot::has_oom_marker() const { return oom_graph_->dataCount() > 0; }

bool MemoryPlot::oom_marker_in_clear_view() {
    if (!has_oom_marker()) return false;
    refresh();
    plot_->replot(QCustomPlot::rpImmediateRefresh);
    const auto point = oom_graph_->data()->constBegin();
    const QPointF centre(plot_->xAxis->coordToPixel(point->key), plot_->yAxis->coordToPixel(point->value));
    const double r = oom_graph_->scatterStyle().size() / 2.0;
    const QRectF mark(centre - QPointF(r, r), QSizeF(2 * r, 2 * r));
    const QRectF area(plot_->axisRect()->rect());
    return area.contains(mark) && centre.x() >= area.left() + 0.8 * area.width() &&
           !QRectF(plot_->legend->outerRect()).intersects(mark);
}

void MemoryPlot::rebuild() {
    QVector<double> t, current, peak, reserved;
    for (const auto& r : records_) {
        t.push_back(r.elapsed_s);
        current.push_back(r.memory_bytes / mib);
        peak.push_back(r.peak_memory_bytes / mib);
        reserved.push_back(r.reserved_bytes / mib);
    }
    current_graph_->setData(t, current, true);
    peak_graph_->setData(t, peak, true);
    current_graph_->setName(other_ranks_.empty() ? tr("current") : tr("current (rank 0)"));
    // The other ranks' current memory, from their figures at each gradient sync.
    static const QList<QColor> rank_colours = {QColor(21, 101, 192), QColor(239, 108, 0), QColor(0, 131, 143),
                                               QColor(173, 20, 87), QColor(85, 139, 47)};
    for (const auto& [rank, rows] : other_ranks_) {
        auto*& graph = rank_graphs_[rank];
        if (!graph) {
            graph = plot_->addGraph();
            graph->setName(tr("rank %1").arg(rank));
            graph->setPen(QPen(rank_colours[(rank - 1) % rank_colours.size()], 1.6));
        }
        QVector<double> rt, rv;
        for (const auto& r : rows) {
            rt.push_back(r.elapsed_s);
            rv.push_back(r.memory_bytes / mib);
        }
        graph->setData(rt, rv, true);
    }
    cuda_ = !records_.empty() && records_.back().cuda;
    title_->setText(cuda_ ? tr("GPU memory (allocated by tensors)") : tr("CPU tensor memory"));
    if (cuda_) {
        reserved_graph_->setData(t, reserved, true);
        reserved_graph_->addToLegend();
    } else {
        reserved_graph_->data()->clear();
        reserved_graph_->removeFromLegend();
    }

    const std::int64_t budget = records_.empty() ? 0 : records_.back().budget_bytes;
    budget_line_->setVisible(budget > 0);
    budget_graph_->data()->clear();
    if (budget > 0) {
        budget_line_->point1->setCoords(0.0, budget / mib);
        budget_line_->point2->setCoords(1.0, budget / mib);
        // An invisible two-point copy so the legend shows it and autoscale includes it.
        const double t_end = t.isEmpty() ? 1.0 : std::max(t.back(), 1e-3);
        budget_graph_->setData(QVector<double>{0.0, t_end}, QVector<double>{budget / mib, budget / mib}, true);
        budget_graph_->addToLegend();
        budget_graph_->setName(tr("budget %1").arg(QString::fromStdString(accum::format_byte_size(budget))));
    } else {
        budget_graph_->removeFromLegend();
    }

    oom_graph_->data()->clear();
    oom_label_->setVisible(false);
    if (oom_) {
        const double x = t.isEmpty() ? 0.0 : t.back();
        const double y = std::max<double>(oom_peak_, budget) / mib;
        oom_graph_->setData(QVector<double>{x}, QVector<double>{y});
        oom_graph_->addToLegend();
        oom_label_->position->setCoords(x, y);
        oom_label_->setVisible(true);
    } else {
        oom_graph_->removeFromLegend();
    }
}

void MemoryPlot::refresh() {
    if (!dirty_) return;
    dirty_ = false;
    rebuild();
    if (auto_range_) {
        plot_->rescaleAxes();
        const auto y = plot_->yAxis->range();
        plot_->yAxis->setRange(0.0, std::max(1.0, y.upper * 1.45));
        const auto x = plot_->xAxis->range();
        if (oom_) // the run ended there: its mark at the right, whole, clear of the legend
            plot_->xAxis->setRange(std::min(0.0, x.lower), std::max(x.upper * 1.08, 1e-3));
        else
            plot_->xAxis->setRange(std::min(0.0, x.lower), std::max(x.upper * 1.03, 0.5));
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool MemoryPlot::save_image(const QString& path) const {
    if (QFileInfo(path).suffix().compare(QLatin1String("pdf"), Qt::CaseInsensitive) == 0)
        return plot_->savePdf(path, 1200, 500);
    return plot_->savePng(path, 1200, 500);
}

void MemoryPlot::write_csv(QTextStream& out) const {
    out << "elapsed_s,memory_bytes,peak_memory_bytes,reserved_bytes,budget_bytes,rss_bytes,cuda\n";
    for (const auto& r : records_)
        out << r.elapsed_s << ',' << r.memory_bytes << ',' << r.peak_memory_bytes << ',' << r.reserved_bytes << ','
            << r.budget_bytes << ',' << r.rss_bytes << ',' << (r.cuda ? 1 : 0) << '\n';
}

} // namespace studio
