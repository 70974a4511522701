#include "plot_look.h"

#include <QFontInfo>
#include <QGuiApplication>
#include <QScreen>
#include <algorithm>
#include <iterator>
#include <cmath>
#include <qcustomplot.h>

#include "screen_fit.h"

namespace studio {

namespace {

QPen widened(QPen pen, double scale) {
    // A cosmetic pen of width 0 draws one pixel: give it a real width to scale.
    pen.setWidthF((pen.widthF() > 0 ? pen.widthF() : 1.0) * scale);
    return pen;
}

} // namespace

QFont PlotLook::scaled(const QFont& font, double scale) {
    QFont f = font;
    if (font.pointSizeF() > 0)
        f.setPointSizeF(font.pointSizeF() * scale);
    else if (font.pixelSize() > 0)
        f.setPixelSize(qRound(font.pixelSize() * scale));
    return f;
}

QFont PlotLook::scaled(const QFont& font, double scale, int least_pixels) {
    QFont f = scaled(font, scale);
    if (least_pixels > 0 && QFontInfo(f).pixelSize() < least_pixels) f.setPixelSize(least_pixels);
    return f;
}

int PlotLook::least_text_pixels(const QWidget* widget) {
    const QScreen* screen = widget && widget->screen() ? widget->screen() : QGuiApplication::primaryScreen();
    return static_cast<int>(std::ceil((screen ? screen->geometry().height() : 720) / kPresentationTextFraction));
}

void PlotLook::fit_tick_count(QCPAxis* axis, double scale) {
    constexpr int kDeskTicks = 5; // QCPAxisTicker's own
    if (!axis || !axis->ticker()) return;
    axis->ticker()->setTickCount(scale > 1.0 ? std::max(3, static_cast<int>(std::lround(kDeskTicks / scale))) : kDeskTicks);
}

void PlotLook::legend_below(QCustomPlot* plot, bool below, int columns) {
    auto* legend = plot->legend;
    auto* inset = plot->axisRect()->insetLayout();
    auto* grid = plot->plotLayout();
    const bool is_below = legend->layout() == grid;
    if (below == is_below) return;
    if (below) {
        for (int i = 0; i < inset->elementCount(); ++i)
            if (inset->elementAt(i) == legend) {
                plot->setProperty("desk_legend_alignment", int(inset->insetAlignment(i)));
                break;
            }
        plot->setProperty("desk_legend_wrap", legend->wrap());
        plot->setProperty("desk_legend_fill", int(legend->fillOrder()));
        plot->setProperty("desk_legend_margins", QVariant::fromValue(legend->margins()));
        inset->take(legend);
        inset->simplify();
        if (columns > 0) {
            const int row = grid->rowCount();
            grid->addElement(row, 0, legend);
            grid->setRowStretchFactor(row, 0.001);
            legend->setWrap(columns);
            legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
        } else {
            // Beside the axis rect, not beside a title row above it.
            int row = 0;
            for (int r = 0; r < grid->rowCount(); ++r)
                if (grid->hasElement(r, 0) && grid->element(r, 0) == plot->axisRect()) row = r;
            const int column = grid->columnCount();
            grid->addElement(row, column, legend);
            grid->setColumnStretchFactor(column, 0.001);
            legend->setWrap(0);
            legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
        }
        legend->setMargins(QMargins(4, 2, 4, 2));
    } else {
        grid->take(legend);
        grid->simplify();
        inset->addElement(legend, Qt::Alignment(plot->property("desk_legend_alignment").toInt()));
        legend->setWrap(plot->property("desk_legend_wrap").toInt());
        legend->setFillOrder(QCPLayoutGrid::FillOrder(plot->property("desk_legend_fill").toInt()), true);
        legend->setMargins(plot->property("desk_legend_margins").value<QMargins>());
    }
}

void PlotLook::capture(QCustomPlot* plot) {
    plot_ = plot;
    axes_.clear();
    graphs_.clear();
    texts_.clear();
    items_.clear();
    for (auto* rect : plot->axisRects())
        for (auto* axis : rect->axes())
            axes_.push_back({axis, axis->labelFont(), axis->tickLabelFont(), axis->basePen(), axis->tickPen(),
                             axis->subTickPen(), axis->tickLengthIn(), axis->tickLengthOut(), axis->labelPadding(),
                             axis->tickLabelPadding()});
    for (int i = 0; i < plot->graphCount(); ++i) {
        auto* g = plot->graph(i);
        graphs_.push_back({g, g->pen(), g->scatterStyle().size(), g->scatterStyle().pen()});
    }
    for (auto* element : plot->plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(element)) texts_.push_back({text, text->font()});
    for (int i = 0; i < plot->itemCount(); ++i) {
        auto* item = plot->item(i);
        ItemLook look{item, {}, {}, {}};
        if (auto* text = qobject_cast<QCPItemText*>(item)) {
            look.font = text->font();
            look.padding = text->padding();
            look.pen = text->pen();
        } else if (auto* line = qobject_cast<QCPItemStraightLine*>(item)) {
            look.pen = line->pen();
        } else if (auto* rect = qobject_cast<QCPItemRect*>(item)) {
            look.pen = rect->pen();
        }
        items_.push_back(look);
    }
    legend_font_ = plot->legend->font();
    legend_icon_ = plot->legend->iconSize();
    scale_ = 1.0;
}

void PlotLook::apply(double scale) {
    if (!plot_) return;
    scale_ = scale;
    // In presentation mode no text below 1/40 of the screen's height, whatever its
    // desk size (a chart's 8-point ticks would stay small at 1.5 ×).
    const int least = scale > 1.0 ? least_text_pixels(plot_) : 0;
    for (const auto& a : axes_) {
        if (!a.axis) continue;
        a.axis->setLabelFont(scaled(a.label, scale, least));
        a.axis->setTickLabelFont(scaled(a.ticks, scale, least));
        fit_tick_count(a.axis, scale);
        a.axis->setBasePen(widened(a.base, scale));
        a.axis->setTickPen(widened(a.tick, scale));
        a.axis->setSubTickPen(widened(a.sub_tick, scale));
        a.axis->setTickLength(qRound(a.tick_length_in * scale), qRound(a.tick_length_out * scale));
        a.axis->setLabelPadding(qRound(a.label_padding * scale));
        a.axis->setTickLabelPadding(qRound(a.tick_label_padding * scale));
    }
    for (const auto& g : graphs_) {
        if (!g.graph) continue;
        g.graph->setPen(widened(g.pen, scale));
        auto style = g.graph->scatterStyle();
        if (g.marker_size > 0) {
            style.setSize(g.marker_size * scale);
            style.setPen(widened(g.marker_pen, scale));
            g.graph->setScatterStyle(style);
        }
    }
    for (const auto& t : texts_)
        if (t.element) t.element->setFont(scaled(t.font, scale, least));
    for (const auto& i : items_) {
        if (!i.item) continue;
        if (auto* text = qobject_cast<QCPItemText*>(i.item.data())) {
            text->setFont(scaled(i.font, scale, least));
            const auto& p = i.padding;
            text->setPadding(QMargins(qRound(p.left() * scale), qRound(p.top() * scale), qRound(p.right() * scale),
                                      qRound(p.bottom() * scale)));
        } else if (auto* line = qobject_cast<QCPItemStraightLine*>(i.item.data())) {
            line->setPen(widened(i.pen, scale));
        } else if (auto* rect = qobject_cast<QCPItemRect*>(i.item.data())) {
            if (i.pen.style() != Qt::NoPen) rect->setPen(widened(i.pen, scale));
        }
    }
    plot_->legend->setFont(scaled(legend_font_, scale, least));
    for (int i = 0; i < plot_->legend->itemCount(); ++i) // items made before keep their own font
        if (auto* item = plot_->legend->item(i)) item->setFont(plot_->legend->font());
    plot_->legend->setIconSize(QSize(qRound(legend_icon_.width() * scale), qRound(legend_icon_.height() * scale)));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QColor memory_band_colour(int band) {
    static const QColor colours[] = {QColor(21, 101, 192), QColor(245, 124, 0), QColor(0, 137, 123),
                                     QColor(46, 125, 50), QColor(158, 157, 36)};
    return colours[static_cast<std::size_t>(band) % std::size(colours)];
}

QColor run_colour(int index) {
    static const QColor colours[] = {QColor(0x1f77b4), QColor(0xd62728), QColor(0x2ca02c), QColor(0x9467bd),
                                     QColor(0xff7f0e), QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf)};
    return colours[static_cast<std::size_t>(index) % std::size(colours)];
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
