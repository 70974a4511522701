#include "plot_look.h"

#include <qcustomplot.h>

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
    for (const auto& a : axes_) {
        if (!a.axis) continue;
        a.axis->setLabelFont(scaled(a.label, scale));
        a.axis->setTickLabelFont(scaled(a.ticks, scale));
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
        if (t.element) t.element->setFont(scaled(t.font, scale));
    for (const auto& i : items_) {
        if (!i.item) continue;
        if (auto* text = qobject_cast<QCPItemText*>(i.item.data())) {
            text->setFont(scaled(i.font, scale));
            const auto& p = i.padding;
            text->setPadding(QMargins(qRound(p.left() * scale), qRound(p.top() * scale), qRound(p.right() * scale),
                                      qRound(p.bottom() * scale)));
        } else if (auto* line = qobject_cast<QCPItemStraightLine*>(i.item.data())) {
            line->setPen(widened(i.pen, scale));
        } else if (auto* rect = qobject_cast<QCPItemRect*>(i.item.data())) {
            if (i.pen.style() != Qt::NoPen) rect->setPen(widened(i.pen, scale));
        }
    }
    plot_->legend->setFont(scaled(legend_font_, scale));
    plot_->legend->setIconSize(QSize(qRound(legend_icon_.width() * scale), qRound(legend_icon_.height() * scale)));
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace studio
