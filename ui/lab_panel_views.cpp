// SPDX-License-Identifier: GPL-3.0-or-later
// LabPanel's views of the runs: the loss / |Δ loss| / learning-rate plot and the
// memory bars, rebuilt from the queue's results (the table is lab_table.h).
#include "lab_panel.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <algorithm>
#include <cmath>
#include <map>
#include <qcustomplot.h>

#include "engine_text.h"
#include "engine_use.h"
#include "link_curve.h"
#include "lab_panel_parts.h"
#include "lab_table.h"
#include "plot_interaction.h"

namespace studio {

using namespace lab_parts;

void LabPanel::fill_table() { table_->fill(queue_->results(), scale_ > 1.0); }

void LabPanel::rebuild_plot() {
    plot_->clearGraphs();
    const bool lr = y_axis_->currentIndex() == LearningRateAxis;
    const bool scale_axis = y_axis_->currentIndex() == LossScaleAxis; // log-scaled, on the left
    const bool samples = x_axis_->currentIndex() == 1;
    auto* delta_x = delta_rect_->axis(QCPAxis::atBottom);
    auto* delta_y = delta_rect_->axis(QCPAxis::atLeft);
    double worst = 0.0;
    bool scaling = false, crosses_in_legend = false;
    double lowest_scale = INFINITY, highest_scale = -INFINITY;
    for (std::size_t i = 0; i < shown_.size(); ++i) {
        const auto& r = shown_[i];
        const bool scaled = r.config.uses_loss_scaler();
        auto* g = plot_->addGraph();
        g->setName(r.label.isEmpty() ? tr("run %1").arg(i + 1) : r.label);
        const QColor colour = run_colours()[int(i) % run_colours().size()];
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
        std::map<std::int64_t, double> reference;
        for (const auto& s : shown_.front().steps) reference[s.step] = s.loss;
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
    if (memory_bars_->isVisible() || experiment_ == Experiment::MemoryLevers) rebuild_memory_bars();
}

void LabPanel::rebuild_memory_bars() {
    memory_bars_->clearPlottables();
    constexpr int kParts = 5;
    const QString names[kParts] = {tr("parameters"), tr("gradients"), tr("optimizer state"), tr("activations (peak)"),
                                   tr("optimizer step (above the activations)")};
    const QColor colours[kParts] = {QColor(21, 101, 192), QColor(245, 124, 0), QColor(0, 137, 123),
                                    QColor(46, 125, 50), QColor(158, 157, 36)};
    QVector<double> keys;
    QVector<double> values[kParts];
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    double top = 1.0;
    for (std::size_t i = 0; i < shown_.size(); ++i) {
        const auto m = memory_bands(shown_[i]);
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
        const auto& c = shown_[i].config;
        ticks->addTick(key, c.gradient_checkpointing ? tr("%1 × %2\n+ ckpt").arg(c.batch_size).arg(c.accumulation_steps)
                                                     : tr("%1 × %2").arg(c.batch_size).arg(c.accumulation_steps));
    }
    QCPBars* below = nullptr;
    for (int c = 0; c < kParts; ++c) {
        auto* bars = new QCPBars(memory_bars_->xAxis, memory_bars_->yAxis);
        bars->setName(names[c]);
        bars->setWidth(0.6);
        bars->setPen(QPen(colours[c].darker(120)));
        QColor fill = colours[c];
        fill.setAlpha(190);
        bars->setBrush(fill);
        bars->setData(keys, values[c], true);
        if (below) bars->moveAbove(below);
        below = bars;
    }
    memory_bars_->xAxis->setTicker(ticks);
    memory_bars_->xAxis->setRange(0.4, std::max<double>(1.6, static_cast<double>(shown_.size()) + 0.6));
    memory_bars_->yAxis->setRange(0.0, top * 1.08);
    memory_bars_->replot();
}

int LabPanel::delta_graph_count() const {
    int n = 0;
    for (int i = 0; i < plot_->graphCount(); ++i)
        if (plot_->graph(i)->valueAxis() == delta_rect_->axis(QCPAxis::atLeft)) ++n;
    return n;
}

void LabPanel::fit_table_height() {
    if (scale_ <= 1.0) return;
    // In presentation mode the table as tall as its rows (in the large font), the plots the rest.
    table_->resizeRowsToContents();
    const int height = std::max(split_->height(), 200);
    const int rows = std::max(table_->rowCount(), 3);
    const int row = table_->rowCount() > 0 ? table_->rowHeight(0) : table_->verticalHeader()->defaultSectionSize();
    const int table = table_->horizontalHeader()->sizeHint().height() + rows * row + 2 * table_->frameWidth() +
                      table_->horizontalScrollBar()->sizeHint().height();
    split_->setSizes({height - table, table});
}

} // namespace studio
