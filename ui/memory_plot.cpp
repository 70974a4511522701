#include "memory_plot.h"

#include "plot_interaction.h"
#include <QFileInfo>
#include <QFontInfo>
#include <QLabel>
#include <QMouseEvent>
#include <QScreen>
#include <QTextStream>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <qcustomplot.h>

#include "accum/session.h"

namespace studio {

namespace {
constexpr double mib = 1024.0 * 1024.0;

// The bands, bottom to top: the static parts, the activations, what the
// optimizer step needed above them (a peak's fifth part; 0 at a moment).
constexpr int kBands = 5;
using Bands = std::array<std::int64_t, kBands>;

// A record's figures of the moment, bottom to top. A record written before the
// categories existed has only its total: all of it shows as activations.
Bands now_of(const accum::MemoryRecord& r) {
    Bands b{r.parameters_bytes, r.gradients_bytes, r.optimizer_state_bytes, r.activations_bytes, 0};
    if (b[0] + b[1] + b[2] + b[3] == 0) b[3] = r.memory_bytes;
    return b;
}

bool has_interval_peak(const accum::MemoryRecord& r) { return r.interval_peak_bytes > 0; }

// The five bands of a record, bottom to top: the parts of the peak since the
// previous record (they add up to it). Records come between micro-batches, when
// the activations are freed: drawn at the moment, the bands would stay at the
// static part under the peak line. A record without the interval peak (written
// before it existed) is drawn at its moment.
Bands bands_of(const accum::MemoryRecord& r) {
    if (!has_interval_peak(r)) return now_of(r);
    return {r.peak_parameters_bytes, r.peak_gradients_bytes, r.peak_optimizer_state_bytes, r.peak_activations_bytes,
            r.peak_optimizer_step_bytes};
}

QString mib_text(std::int64_t bytes) { return QString::fromStdString(accum::format_byte_size(bytes)); }
} // namespace

MemoryPlot::MemoryPlot(QWidget* parent) : QWidget(parent) {
    plot_ = new QCustomPlot(this);
    plot_->setObjectName(QStringLiteral("memory_plot"));
    plot_->setMinimumHeight(140);
    // Its least width is its own, not its legend's: the legend's second column
    // in large text takes its room from the curves, never from the code panel
    // beside (test_layout_fit).
    plot_->setMinimumWidth(200);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->plotLayout()->insertRow(0);
    title_ = new QCPTextElement(plot_, QString(), QFont(font().family(), 12, QFont::Bold));
    plot_->plotLayout()->addElement(0, 0, title_);

    // The stack's top first (graph 0: the memory line whose width presentation
    // mode scales), drawn above the bands.
    plot_->addLayer(QStringLiteral("lines"), plot_->layer(QStringLiteral("main")), QCustomPlot::limAbove);
    current_graph_ = plot_->addGraph();
    current_graph_->setPen(QPen(QColor(27, 94, 32), 2));
    current_graph_->setLayer(QStringLiteral("lines"));
    current_graph_->removeFromLegend(); // the top of the stacked bands
    // Stacked bands, bottom to top: each graph is the running sum and fills down
    // to the one below (the first to zero).
    // A record's peak covers the time since the previous record: each band, the
    // stack's top and the peak line hold a record's value over the interval
    // before it (steps ending at the record), so an out-of-memory at the first
    // micro-batch shows the failing step's parts, not a ramp from the start.
    current_graph_->setLineStyle(QCPGraph::lsStepRight);
    for (int i = 0; i < kBands; ++i) {
        auto* band = plot_->addGraph();
        band->setPen(QPen(memory_band_colour(i).darker(115), 1));
        QColor fill = memory_band_colour(i);
        fill.setAlpha(i >= 3 ? 110 : 150);
        band->setBrush(fill);
        band->setLineStyle(QCPGraph::lsStepRight);
        if (i > 0) band->setChannelFillGraph(bands_.back());
        bands_.push_back(band);
    }
    // The frozen weights (requires_grad false: a LoRA run's base model), hatched
    // over the bottom of the parameters band they belong to; in the legend only
    // where a run has them.
    frozen_graph_ = plot_->addGraph();
    frozen_graph_->setPen(QPen(memory_band_colour(0).darker(160), 1));
    frozen_graph_->setBrush(QBrush(memory_band_colour(0).darker(160), Qt::BDiagPattern));
    frozen_graph_->setLineStyle(QCPGraph::lsStepRight);
    frozen_graph_->removeFromLegend();
    sync_graph_ = plot_->addGraph();
    sync_graph_->setLineStyle(QCPGraph::lsImpulse);
    sync_graph_->setPen(QPen(QColor(40, 40, 40, 110), 1));
    sync_graph_->setLayer(QStringLiteral("lines"));
    sync_graph_->removeFromLegend();
    peak_graph_ = plot_->addGraph();
    peak_graph_->setPen(QPen(QColor(123, 31, 162), 2, Qt::DashLine));
    peak_graph_->setLineStyle(QCPGraph::lsStepRight);
    peak_graph_->setLayer(QStringLiteral("lines"));
    reserved_graph_ = plot_->addGraph();
    reserved_graph_->setPen(QPen(QColor(120, 120, 120), 1.5, Qt::DotLine));
    reserved_graph_->removeFromLegend();
    budget_graph_ = plot_->addGraph();
    budget_graph_->setPen(QPen(QColor(198, 40, 40), 2, Qt::DashDotLine));
    budget_graph_->removeFromLegend();
    oom_graph_ = plot_->addGraph();
    oom_graph_->setLineStyle(QCPGraph::lsNone);
    oom_graph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCrossCircle, QPen(QColor(198, 40, 40), 3), QBrush(Qt::white), 16));
    oom_graph_->removeFromLegend();

    budget_line_ = new QCPItemStraightLine(plot_);
    budget_line_->setPen(budget_graph_->pen());
    budget_line_->setVisible(false);
    oom_label_ = new QCPItemText(plot_);
    oom_label_->setColor(QColor(198, 40, 40));
    oom_label_->setFont(QFont(font().family(), 11, QFont::Bold));
    // The marker is the last point in time: its label reads leftwards from it.
    oom_label_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    oom_label_->setPadding(QMargins(0, 0, 14, 8));
    oom_label_->setVisible(false);

    // Beside the plot area, one entry a row (the area is about a hundred pixels
    // high on a 720-line screen, no room inside): the bands' colours and the lines;
    // the budget and the out-of-memory mark join it when they appear.
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->axisRect()->insetLayout()->simplify();
    plot_->plotLayout()->addElement(1, 1, plot_->legend);
    plot_->plotLayout()->setColumnStretchFactor(1, 0.001);
    plot_->legend->setBorderPen(Qt::NoPen);
    plot_->legend->setIconSize(14, 9);
    plot_->legend->setRowSpacing(0);
    plot_->legend->setMargins(QMargins(2, 0, 2, 0));
    // Entries that do not fit the height in one column go on in another, at
    // every replot: the text's size, the plot's height and the entries change.
    connect(plot_, &QCustomPlot::beforeReplot, this, [this] { wrap_legend_to_height(plot_); });
    use_fast_drawing(plot_);
    freeze_view_on_interaction(plot_, this, &auto_range_, [this] {
        dirty_ = true;
        refresh();
    });
    look_.capture(plot_);
    plot_->setMouseTracking(true);
    connect(plot_, &QCustomPlot::mouseMove, this, &MemoryPlot::show_hover);

    caption_ = new QLabel;
    // The title, the budget's and the ranks' names follow the records: rebuild() sets them.
    texts_.add([this] {
        current_graph_->setName(tr("current (total)"));
        const QString names[kBands] = {tr("parameters"), tr("gradients"), tr("optimizer state"), tr("activations"),
                                       tr("optimizer step")};
        for (int i = 0; i < kBands; ++i) bands_[static_cast<std::size_t>(i)]->setName(names[i]);
        frozen_graph_->setName(tr("frozen weights"));
        sync_graph_->setName(tr("optimizer steps"));
        peak_graph_->setName(tr("peak"));
        reserved_graph_->setName(tr("reserved (caching allocator)"));
        budget_graph_->setName(tr("budget"));
        oom_graph_->setName(tr("out of memory"));
        oom_label_->setText(tr("out of memory"));
        plot_->xAxis->setLabel(tr("wall time (s)"));
        plot_->yAxis->setLabel(tr("MiB"));
        caption_->setText(tr("Accumulation shrinks only the activations band."));
        caption_->setToolTip(tr("The activations (saved for backward, the batch, temporaries) grow with the "
                                "micro-batch: more accumulation steps with a smaller micro-batch shrink them. "
                                "Parameters, gradients and optimizer state belong to the model and the optimizer. "
                                "Gradient checkpointing shrinks the activations too, at the cost of a second forward. "
                                "The optimizer step's temporaries (AdamW's are a few times the largest parameter) show "
                                "on top where the step needed more than the activations: at a small micro-batch they "
                                "set the peak. The bands show what the peak between two records was made of; hovering "
                                "shows the figures of the moment too."));
        for (const auto& [rank, graph] : rank_graphs_)
            if (graph) graph->setName(tr("rank %1").arg(rank));
        title_->setText(device_title());
    });
    caption_->setObjectName(QStringLiteral("memory_caption"));
    caption_->setWordWrap(true);
    caption_->setStyleSheet(QStringLiteral("color: palette(mid);"));
    caption_font_ = caption_->font();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(plot_, 1);
    layout->addWidget(caption_);
}

void MemoryPlot::set_presentation_scale(double scale) {
    look_.apply(scale);
    // The sentence the plot is there for: as large as the plot's text in front of a class.
    QFont font = caption_font_;
    if (scale > 1.0) {
        const QScreen* screen = caption_->screen();
        const int least = screen ? screen->geometry().height() / 40 : 0;
        font.setPixelSize(std::max(least, static_cast<int>(QFontInfo(caption_font_).pixelSize() * scale)));
    }
    caption_->setFont(font);
}

void MemoryPlot::set_device(const QString& device) {
    // The device the engine resolves the request to: "auto" and "cuda" are cuda:0.
    const QString wanted = device == QLatin1String("auto") || device == QLatin1String("cuda") ? QStringLiteral("cuda:0")
                                                                                            : device;
    cuda_device_.clear();
    for (const auto& d : accum::list_devices())
        if (d.available && QString::fromStdString(d.name) == wanted) {
            const auto description = QString::fromStdString(d.description); // "NVIDIA H200 (139 GiB)"
            const auto open = description.lastIndexOf(QLatin1Char('('));
            cuda_device_ = open > 0 ? description.left(open).trimmed() + QStringLiteral(", ") +
                                          description.mid(open + 1).chopped(1)
                                    : description;
        }
}

QString MemoryPlot::title_text() const { return title_->text(); }

void MemoryPlot::clear() {
    records_.clear();
    other_ranks_.clear();
    for (auto& [rank, graph] : rank_graphs_) plot_->removeGraph(graph);
    rank_graphs_.clear();
    sync_times_.clear();
    oom_ = false;
    oom_peak_ = 0;
    auto_range_ = true;
    dirty_ = true;
    refresh();
}

void MemoryPlot::append(const RecordBatch& batch) {
    for (const auto& s : batch.steps) sync_times_.push_back(s.elapsed_s);
    ticks_dirty_ = ticks_dirty_ || !batch.steps.empty();
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

int MemoryPlot::sync_tick_count() const { return sync_graph_->dataCount(); }

double MemoryPlot::stacked_top_mib(int index) const {
    const auto data = bands_.back()->data();
    return index >= 0 && index < data->size() ? (data->constBegin() + index)->value : -1.0;
}

double MemoryPlot::peak_line_mib(int index) const {
    const auto data = peak_graph_->data();
    return index >= 0 && index < data->size() ? (data->constBegin() + index)->value : -1.0;
}

std::vector<std::int64_t> MemoryPlot::band_bytes() const {
    if (records_.empty()) return std::vector<std::int64_t>(kBands, 0);
    const auto b = bands_of(records_.back());
    return {b.begin(), b.end()};
}

QString MemoryPlot::hover_text(double t) const {
    if (records_.empty()) return {};
    const auto after = std::lower_bound(records_.begin(), records_.end(), t,
                                        [](const accum::MemoryRecord& r, double x) { return r.elapsed_s < x; });
    auto nearest = after == records_.end() ? after - 1 : after;
    if (after != records_.begin() && after != records_.end() && t - (after - 1)->elapsed_s < after->elapsed_s - t)
        nearest = after - 1;
    const auto& r = *nearest;
    const auto b = bands_of(r);
    QString text = tr("%1 s").arg(r.elapsed_s, 0, 'f', 2);
    // The bands' figures (the peak since the previous record, when the record has
    // it), then the moment's.
    if (has_interval_peak(r))
        text += QLatin1Char('\n') + tr("peak since the previous record: %1").arg(mib_text(r.interval_peak_bytes));
    if (b[4] > 0) text += QLatin1Char('\n') + tr("optimizer step (above the activations) %1").arg(mib_text(b[4]));
    text += QLatin1Char('\n') + tr("activations %1").arg(mib_text(b[3]));
    text += QLatin1Char('\n') + tr("optimizer state %1").arg(mib_text(b[2]));
    text += QLatin1Char('\n') + tr("gradients %1").arg(mib_text(b[1]));
    text += QLatin1Char('\n') + tr("parameters %1").arg(mib_text(b[0]));
    if (r.frozen_parameters_bytes > 0)
        text += QLatin1Char('\n') + tr("of them frozen weights %1 (no gradients, no optimizer state)")
                                         .arg(mib_text(r.frozen_parameters_bytes));
    if (has_interval_peak(r)) {
        const auto now = now_of(r);
        text += QLatin1Char('\n') + tr("now: %1 (activations %2, gradients %3)")
                                         .arg(mib_text(r.memory_bytes), mib_text(now[3]), mib_text(now[1]));
        text += QLatin1Char('\n') + tr("peak of the run so far: %1").arg(mib_text(r.peak_memory_bytes));
    } else {
        text += QLatin1Char('\n') + tr("total %1, peak so far %2").arg(mib_text(r.memory_bytes), mib_text(r.peak_memory_bytes));
    }
    if (r.budget_bytes > 0) text += QLatin1Char('\n') + tr("budget %1").arg(mib_text(r.budget_bytes));
    return text;
}

void MemoryPlot::show_hover(QMouseEvent* event) {
    if (records_.empty() || !plot_->axisRect()->rect().contains(event->pos())) {
        QToolTip::hideText();
        return;
    }
    const double t = plot_->xAxis->pixelToCoord(event->pos().x());
#if QT_VERSION >= QT_VERSION_CHECK(6, 0, 0)
    const QPoint global = event->globalPosition().toPoint();
#else
    const QPoint global = event->globalPos();
#endif
    QToolTip::showText(global, hover_text(t), plot_);
}
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
    QVector<double> t, current, peak, reserved, frozen;
    QVector<double> stacked[kBands];
    for (const auto& r : records_) {
        t.push_back(r.elapsed_s);
        peak.push_back(r.peak_memory_bytes / mib);
        reserved.push_back(r.reserved_bytes / mib);
        const auto b = bands_of(r);
        double sum = 0;
        for (int i = 0; i < kBands; ++i) stacked[i].push_back((sum += static_cast<double>(b[i])) / mib);
        current.push_back(sum / mib); // the stack's top edge: the interval peak (or the moment's total)
        frozen.push_back(static_cast<double>(std::min(r.frozen_parameters_bytes, b[0])) / mib);
    }
    frozen_bytes_ = records_.empty() ? 0 : records_.back().frozen_parameters_bytes;
    if (frozen_bytes_ > 0) {
        frozen_graph_->setData(t, frozen, true);
        frozen_graph_->addToLegend();
    } else {
        frozen_graph_->data()->clear();
        frozen_graph_->removeFromLegend();
    }
    current_graph_->setData(t, current, true);
    for (int i = 0; i < kBands; ++i) bands_[static_cast<std::size_t>(i)]->setData(t, stacked[i], true);
    peak_graph_->setData(t, peak, true);
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
    title_->setText(device_title());
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

QString MemoryPlot::device_title() const {
    return !cuda_                 ? tr("CPU tensor memory")
           : cuda_device_.isEmpty() ? tr("GPU memory (allocated by tensors)")
                                    : tr("GPU memory: %1 (allocated by tensors)").arg(cuda_device_);
}

void MemoryPlot::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::LanguageChange) {
        texts_.apply();
        dirty_ = true; // the budget's name, with its figure
        refresh();
    }
}

void MemoryPlot::refresh() {
    if (!dirty_ && !ticks_dirty_) return;
    // Step ticks alone (between memory records): the curves stay as they are.
    const bool rebuilt = dirty_;
    dirty_ = ticks_dirty_ = false;
    if (rebuilt) rebuild();
    if (rebuilt && auto_range_) {
        plot_->rescaleAxes();
        const auto y = plot_->yAxis->range();
        plot_->yAxis->setRange(0.0, std::max(1.0, y.upper * 1.15));
        const auto x = plot_->xAxis->range();
        if (oom_) // the run ended there: its mark at the right, whole, clear of the legend
            plot_->xAxis->setRange(std::min(0.0, x.lower), std::max(x.upper * 1.08, 1e-3));
        else
            plot_->xAxis->setRange(std::min(0.0, x.lower), std::max(x.upper * 1.03, 0.5));
    }
    // Ticks a twelfth of the height, at the bottom: where the optimizer stepped.
    const double tick = 0.08 * plot_->yAxis->range().size();
    QVector<double> ticks_t, ticks_y;
    for (const double s : sync_times_) {
        ticks_t.push_back(s);
        ticks_y.push_back(tick);
    }
    sync_graph_->setData(ticks_t, ticks_y, true);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

bool MemoryPlot::save_image(const QString& path) const {
    if (QFileInfo(path).suffix().compare(QLatin1String("pdf"), Qt::CaseInsensitive) == 0)
        return plot_->savePdf(path, 1200, 500);
    return plot_->savePng(path, 1200, 500);
}

void MemoryPlot::write_csv(QTextStream& out) const {
    out << "elapsed_s,memory_bytes,peak_memory_bytes,reserved_bytes,budget_bytes,rss_bytes,cuda,"
           "parameters_bytes,gradients_bytes,optimizer_state_bytes,activations_bytes,"
           "interval_peak_bytes,peak_parameters_bytes,peak_gradients_bytes,peak_optimizer_state_bytes,"
           "peak_activations_bytes,peak_optimizer_step_bytes\n";
    for (const auto& r : records_)
        out << r.elapsed_s << ',' << r.memory_bytes << ',' << r.peak_memory_bytes << ',' << r.reserved_bytes << ','
            << r.budget_bytes << ',' << r.rss_bytes << ',' << (r.cuda ? 1 : 0) << ',' << r.parameters_bytes << ','
            << r.gradients_bytes << ',' << r.optimizer_state_bytes << ',' << r.activations_bytes << ','
            << r.interval_peak_bytes << ',' << r.peak_parameters_bytes << ',' << r.peak_gradients_bytes << ','
            << r.peak_optimizer_state_bytes << ',' << r.peak_activations_bytes << ',' << r.peak_optimizer_step_bytes
            << '\n';
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
