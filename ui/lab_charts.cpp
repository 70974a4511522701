// SPDX-License-Identifier: GPL-3.0-or-later
// The lab's charts (lab_charts.h): built once, drawn again from the runs on each report.
#include "lab_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <qcustomplot.h>

#include "lab_stats.h"
#include "lab_panel_parts.h"
#include "plot_interaction.h"

namespace studio {

using namespace lab_parts;

LabCharts::LabCharts(const QFont& font, QObject* parent) : QObject(parent) {
    plot_ = new QCustomPlot;
    plot_->setObjectName(QStringLiteral("lab_plot"));
    plot_->setMinimumHeight(200);
    plot_->legend->setVisible(true);
    plot_->legend->setFont(font);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

    // The |Δ loss| panel under the curves, on the same x axis, log-scaled: equal
    // runs sit in the shaded band of float rounding, a pitfall decades above it.
    delta_rect_ = new QCPAxisRect(plot_);
    plot_->plotLayout()->addElement(1, 0, delta_rect_);
    plot_->plotLayout()->setRowStretchFactor(0, 1);
    plot_->plotLayout()->setRowStretchFactor(1, 1); // it carries the x axis's ticks and label
    plot_->plotLayout()->setRowSpacing(0);
    auto* margins = new QCPMarginGroup(plot_);
    plot_->axisRect(0)->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    delta_rect_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    auto* delta_y = delta_rect_->axis(QCPAxis::atLeft);
    delta_y->setScaleType(QCPAxis::stLogarithmic);
    // Ticks at the decades that matter: rounding (10⁻⁸), the band's edge (10⁻⁵),
    // a visible difference (10⁻²) and 1.
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    ticks->addTick(1e-8, QStringLiteral("10⁻⁸"));
    ticks->addTick(1e-5, QStringLiteral("10⁻⁵"));
    ticks->addTick(1e-2, QStringLiteral("10⁻²"));
    ticks->addTick(1.0, QStringLiteral("1"));
    ticks->addTick(1e2, QStringLiteral("100"));
    delta_y->setTicker(ticks);
    delta_y->setSubTicks(false);
    delta_y->setRange(kDeltaFloor, 1.0);
    texts_.add([delta_y] { delta_y->setLabel(tr("|Δ loss|")); });
    plot_->xAxis->setTickLabels(false);
    delta_rect_->setRangeDrag(Qt::Horizontal);
    delta_rect_->setRangeZoom(Qt::Horizontal);
    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), delta_rect_->axis(QCPAxis::atBottom),
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(delta_rect_->axis(QCPAxis::atBottom), qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot_->xAxis,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    auto* rounding_band = new QCPItemRect(plot_);
    rounding_band->setClipAxisRect(delta_rect_);
    for (auto* corner : {rounding_band->topLeft, rounding_band->bottomRight}) {
        corner->setAxisRect(delta_rect_);
        corner->setAxes(delta_rect_->axis(QCPAxis::atBottom), delta_y);
        corner->setTypeX(QCPItemPosition::ptAxisRectRatio);
        corner->setTypeY(QCPItemPosition::ptPlotCoords);
    }
    rounding_band->topLeft->setCoords(0.0, kSameLossTolerance);
    rounding_band->bottomRight->setCoords(1.0, kDeltaFloor);
    rounding_band->setPen(QPen(QColor(46, 125, 50, 150), 1, Qt::DashLine));
    rounding_band->setBrush(QColor(46, 125, 50, 40));
    auto* rounding_label = new QCPItemText(plot_);
    rounding_label->setClipAxisRect(delta_rect_);
    rounding_label->position->setAxisRect(delta_rect_);
    rounding_label->position->setAxes(delta_rect_->axis(QCPAxis::atBottom), delta_y);
    rounding_label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    rounding_label->position->setTypeY(QCPItemPosition::ptPlotCoords);
    // At the right, just above the band's edge: equal runs' curves run inside the
    // band, a pitfall's decades above the label.
    rounding_label->position->setCoords(0.995, kSameLossTolerance);
    rounding_label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    rounding_label->setBrush(QColor(255, 255, 255, 170));
    rounding_label->setPadding(QMargins(4, 2, 4, 2));
    rounding_label->setColor(QColor(27, 94, 32));
    texts_.add([rounding_label] { rounding_label->setText(tr("below: the same, up to float rounding")); });
    look_.capture(plot_);

    // The loss scale of runs with a loss scaler, on the right axis (log-scaled).
    use_scale_axis(plot_->yAxis2, tr("loss scale"));
    texts_.add([this] { plot_->yAxis2->setLabel(tr("loss scale")); });
    plot_->yAxis2->setVisible(false);
    // The memory levers' bars: each run's peak, stacked by category.
    memory_bars_ = new QCustomPlot;
    memory_bars_->setObjectName(QStringLiteral("lab_memory_bars"));
    memory_bars_->setMinimumHeight(200);
    memory_bars_->plotLayout()->insertRow(0);
    auto* bars_title = new QCPTextElement(memory_bars_, QString(), QFont(font.family(), 10, QFont::Bold));
    memory_bars_->plotLayout()->addElement(0, 0, bars_title);
    // The legend below the bars, in two columns: the bars take the plot's width.
    memory_bars_->legend->setVisible(true);
    memory_bars_->legend->setFont(font);
    memory_bars_->axisRect()->insetLayout()->take(memory_bars_->legend);
    memory_bars_->axisRect()->insetLayout()->simplify();
    memory_bars_->plotLayout()->addElement(2, 0, memory_bars_->legend);
    memory_bars_->plotLayout()->setRowStretchFactor(2, 0.001);
    memory_bars_->legend->setWrap(2);
    memory_bars_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    memory_bars_->legend->setBorderPen(Qt::NoPen);
    memory_bars_->legend->setIconSize(14, 9);
    memory_bars_->legend->setRowSpacing(-2);
    texts_.add([this, bars_title] {
        bars_title->setText(tr("Peak memory by category"));
        memory_bars_->yAxis->setLabel(tr("MiB"));
    });
    memory_bars_->setVisible(false);
    bars_look_.capture(memory_bars_);
}

LabCharts::~LabCharts() {
    // Laid out, the plots belong to the owner's widgets; else to this object.
    for (auto* plot : {plot_.data(), memory_bars_.data()})
        if (plot && !plot->parent()) delete plot;
}

QCustomPlot* LabCharts::plot() const { return plot_; }

QCustomPlot* LabCharts::memory_bars() const { return memory_bars_; }

void LabCharts::fill(const std::vector<RunResult>& runs, LabAxes axes) {
    axes_ = axes;
    rebuild_plot(runs);
    if (!memory_bars_->isHidden()) rebuild_memory_bars(runs); // hidden: not drawn
}

void LabCharts::clear() { fill({}, axes_); }

void LabCharts::show_memory_bars(bool shown) {
    memory_bars_->setVisible(shown);
}

void LabCharts::set_presentation_scale(double scale) {
    scale_ = scale;
    // The legend stays, beside the plots (the curves keep the plot's area).
    PlotLook::legend_below(plot_, scale > 1.0, 0);
    look_.apply(scale);
    bars_look_.apply(scale);
}

void LabCharts::rebuild_plot(const std::vector<RunResult>& runs) {
    plot_->clearGraphs();
    const bool lr = axes_.value == LabAxes::LearningRate;
    const bool scale_axis = axes_.value == LabAxes::LossScale; // log-scaled, on the left
    const bool samples = axes_.samples;
    auto* delta_x = delta_rect_->axis(QCPAxis::atBottom);
    auto* delta_y = delta_rect_->axis(QCPAxis::atLeft);
    double worst = 0.0;
    bool scaling = false, crosses_in_legend = false;
    double lowest_scale = INFINITY, highest_scale = -INFINITY;
    std::map<std::int64_t, double> reference; // the first run's loss by update: the |Δ loss| graphs' base
    if (!runs.empty())
        for (const auto& s : runs.front().steps) reference[s.step] = s.loss;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        const bool scaled = r.config.uses_loss_scaler();
        auto* g = plot_->addGraph();
        g->setName(r.label.isEmpty() ? tr("run %1").arg(i + 1) : r.label);
        const QColor colour = run_colour(int(i));
        QPen pen(colour);
        pen.setWidthF(2.0 * scale_);
        // Later runs dashed, so curves that coincide stay visible.
        if (i == 1) pen.setStyle(Qt::DashLine);
        if (i == 2) pen.setStyle(Qt::DotLine);
        if (i >= 1) pen.setWidthF(2.6 * scale_);
        g->setPen(pen);
        if (scale_axis) g->setLineStyle(QCPGraph::lsStepLeft);
        QVector<double> x, y, sx, sy, kx, ky;
        x.reserve(int(r.steps.size()));
        y.reserve(int(r.steps.size()));
        for (const auto& s : r.steps) {
            const double at = samples ? double(s.samples_seen) : double(s.step);
            const double value = lr ? s.learning_rate : scale_axis ? s.loss_scale : s.loss;
            if (scale_axis && !(std::isfinite(value) && value > 0)) continue;
            x << at;
            y << value;
            // A loss scaler's run: its scale per window, and a cross at each update it skipped.
            if (scaled && std::isfinite(s.loss_scale) && s.loss_scale > 0) {
                sx << at;
                sy << s.loss_scale;
                lowest_scale = std::min(lowest_scale, s.loss_scale);
                highest_scale = std::max(highest_scale, s.loss_scale);
                scaling = true;
            }
            if (s.skipped) {
                kx << at;
                ky << value;
            }
        }
        g->setData(x, y, true);
        if (scaled && !scale_axis && !sx.isEmpty()) { // beside a loss or a rate: the scale on the right axis
            auto* sg = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
            sg->removeFromLegend(); // the right axis says what it is; its colour names the run
            QPen scale_pen(colour.lighter(130));
            scale_pen.setWidthF(1.6 * scale_);
            scale_pen.setStyle(Qt::DashDotLine);
            sg->setPen(scale_pen);
            sg->setLineStyle(QCPGraph::lsStepLeft);
            sg->setData(sx, sy, true);
        }
        if (!kx.isEmpty()) {
            auto* kg = plot_->addGraph();
            kg->setName(tr("update skipped (overflow)"));
            kg->setLineStyle(QCPGraph::lsNone);
            kg->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross,
                                                QPen(colour, 2.5 * scale_),
                                                Qt::NoBrush, 14 * scale_));
            kg->setData(kx, ky, true);
            if (crosses_in_legend) kg->removeFromLegend(); // one legend entry for the crosses
            crosses_in_legend = true;
        }
        if (i == 0) continue;
        // |Δ loss| against the first run at each update both have.
        QVector<double> dx, dy;
        for (const auto& s : r.steps) {
            const auto it = reference.find(s.step);
            if (it == reference.end()) continue;
            const double d = std::abs(s.loss - it->second);
            if (std::isfinite(d)) worst = std::max(worst, d);
            dx << (samples ? double(s.samples_seen) : double(s.step));
            dy << std::max(std::isfinite(d) ? d : 1.0, kDeltaFloor);
        }
        auto* dg = plot_->addGraph(delta_x, delta_y);
        dg->removeFromLegend();
        QPen delta_pen(colour);
        delta_pen.setWidthF(2.6 * scale_);
        dg->setPen(delta_pen);
        dg->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5.0 * scale_));
        dg->setData(dx, dy, true);
    }
    // The |Δ loss| panel below carries the x axis's label.
    delta_x->setLabel(samples ? tr("samples seen") : tr("optimizer steps"));
    if (scale_axis) {
        use_scale_axis(plot_->yAxis, tr("loss scale"));
    } else {
        plot_->yAxis->setLabel(lr ? tr("learning rate") : tr("loss"));
        if (plot_->yAxis->scaleType() != QCPAxis::stLinear) {
            plot_->yAxis->setScaleType(QCPAxis::stLinear);
            plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
            plot_->yAxis->setNumberFormat(QStringLiteral("gb"));
            plot_->yAxis->setNumberPrecision(6);
        }
    }
    plot_->rescaleAxes();
    if (lr) plot_->yAxis->setRangeLower(0.0);
    // Losses framed as the live plot frames them: a margin, and 0 only when it is near.
    QCPRange loss_keys, losses;
    if (!lr && !scale_axis && graphs_extent(plot_, plot_->yAxis, &loss_keys, &losses))
        plot_->yAxis->setRange(framed_range(losses.lower, losses.upper));
    // Room for the legend where the curves are not: above the losses and a
    // learning rate on the right (a loss axis never runs under zero for it); a
    // loss scale falls from its start, so below it.
    const auto y = plot_->yAxis->range();
    // In presentation mode the legend is outside the plot (PlotLook::legend_below).
    const bool legend_inside = plot_->legend->visible() && plot_->legend->layout() != plot_->plotLayout();
    // A corner the loss curves leave free first; else the room below them.
    const bool placed = legend_inside && !lr && !scale_axis &&
                        legend_to_free_corner(plot_, {Qt::Alignment(Qt::AlignTop | Qt::AlignRight),
                                                      Qt::Alignment(Qt::AlignBottom | Qt::AlignLeft),
                                                      Qt::Alignment(Qt::AlignTop | Qt::AlignLeft),
                                                      Qt::Alignment(Qt::AlignBottom | Qt::AlignRight)});
    if (scale_axis) {
        // Close around the scales, so that a halving is a visible step; the legend below them.
        if (scaling) plot_->yAxis->setRange(lowest_scale / (legend_inside ? 256.0 : 4.0), highest_scale * 2.0);
    } else if (legend_inside && !placed) {
        // Room above the curves: below them a loss axis would run under zero.
        plot_->yAxis->setRangeUpper(y.upper + (lr ? 0.45 : 0.6) * std::max(y.size(), 1e-9));
    }
    if (legend_inside && !placed)
        plot_->axisRect()->insetLayout()->setInsetAlignment(0, scale_axis ? (Qt::AlignBottom | Qt::AlignRight)
                                                                          : (Qt::AlignTop | Qt::AlignRight));
    // The tickers just set (a log scale's among them) tick as sparsely as the text's size asks.
    for (auto* rect : plot_->axisRects())
        for (auto* axis : rect->axes()) PlotLook::fit_tick_count(axis, scale_);
    plot_->yAxis2->setVisible(scaling && !scale_axis);
    if (scaling && !scale_axis) plot_->yAxis2->setRange(decades_around(lowest_scale, highest_scale));
    // A fixed floor, and room up to the next decade above the largest difference.
    delta_y->setRange(kDeltaFloor, std::max(1.0, std::pow(10.0, std::ceil(std::log10(std::max(worst, 1e-12))))));
    delta_x->setRange(plot_->xAxis->range());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void LabCharts::rebuild_memory_bars(const std::vector<RunResult>& runs) {
    memory_bars_->clearPlottables();
    constexpr int kParts = 5;
    const QString names[kParts] = {tr("parameters"), tr("gradients"), tr("optimizer state"), tr("activations (peak)"),
                                   tr("optimizer step (above the activations)")};
    QVector<double> keys;
    QVector<double> values[kParts];
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    double top = 1.0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto m = memory_bands(runs[i]);
        const double key = static_cast<double>(i + 1);
        keys << key;
        const std::int64_t parts[kParts] = {m.parameters_bytes, m.gradients_bytes, m.optimizer_state_bytes,
                                            m.activations_bytes, m.optimizer_step_bytes};
        double sum = 0;
        for (int c = 0; c < kParts; ++c) {
            values[c] << parts[c] / (1024.0 * 1024.0);
            sum += parts[c] / (1024.0 * 1024.0);
        }
        top = std::max(top, sum);
        // Under its bar, short: "64 × 4", and a second line with checkpointing.
        const auto& c = runs[i].config;
        ticks->addTick(key, c.gradient_checkpointing ? tr("%1 × %2\n+ ckpt").arg(c.batch_size).arg(c.accumulation_steps)
                                                     : tr("%1 × %2").arg(c.batch_size).arg(c.accumulation_steps));
    }
    QCPBars* below = nullptr;
    for (int c = 0; c < kParts; ++c) {
        auto* bars = new QCPBars(memory_bars_->xAxis, memory_bars_->yAxis);
        bars->setName(names[c]);
        bars->setWidth(0.6);
        bars->setPen(QPen(memory_band_colour(c).darker(120)));
        QColor fill = memory_band_colour(c);
        fill.setAlpha(190);
        bars->setBrush(fill);
        bars->setData(keys, values[c], true);
        if (below) bars->moveAbove(below);
        below = bars;
    }
    // The bars' two legend columns hold their longest names on two lines in
    // presentation mode's larger font, else those ran past the plot's edge.
    legend_names_on_lines(memory_bars_, scale_ > 1.0);
    memory_bars_->xAxis->setTicker(ticks);
    memory_bars_->xAxis->setRange(0.4, std::max<double>(1.6, static_cast<double>(runs.size()) + 0.6));
    memory_bars_->yAxis->setRange(0.0, top * 1.08);
    memory_bars_->replot(QCustomPlot::rpQueuedReplot);
}

int LabCharts::delta_graph_count() const {
    int n = 0;
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->valueAxis() == delta_rect_->axis(QCPAxis::atLeft)) ++n;
    return n;
}

} // namespace studio
