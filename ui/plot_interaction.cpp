#include "plot_interaction.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <qcustomplot.h>

namespace studio {

void use_fast_drawing(QCustomPlot* plot) {
    plot->setPlottingHints(QCP::phFastPolylines | QCP::phCacheLabels);
}

void place_legend(QCustomPlot* plot, Qt::Alignment corner, int columns) {
    plot->legend->setVisible(true);
    plot->legend->setBrush(QColor(255, 255, 255, 210));
    if (columns > 1) {
        plot->legend->setWrap(columns);
        plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true); // rearranges the entries already there
    }
    plot->axisRect()->insetLayout()->setInsetAlignment(0, corner);
}

void freeze_view_on_interaction(QCustomPlot* plot, QObject* context, bool* auto_range, std::function<void()> refit) {
    QObject::connect(plot, &QCustomPlot::mousePress, context, [auto_range] { *auto_range = false; });
    QObject::connect(plot, &QCustomPlot::mouseWheel, context, [auto_range] { *auto_range = false; });
    QObject::connect(plot, &QCustomPlot::mouseDoubleClick, context, [auto_range, refit] {
        *auto_range = true;
        refit();
    });
}

void use_scale_axis(QCPAxis* axis, const QString& label) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    axis->setNumberFormat(QStringLiteral("eb"));
    axis->setNumberPrecision(0);
    axis->setLabel(label);
}

QCPRange framed_range(double lowest, double highest) {
    if (!std::isfinite(lowest) || !std::isfinite(highest)) return QCPRange(0.0, 1.0);
    if (highest < lowest) std::swap(lowest, highest);
    double span = highest - lowest;
    if (span <= 0) span = std::max(std::abs(highest) * 0.1, 1e-6); // one value: ±10 % of it
    double lower = lowest - 0.08 * span;
    const double upper = highest + 0.08 * span;
    if (lowest >= 0 && lowest <= 0.25 * span) lower = 0.0;
    return QCPRange(lower, upper);
}

QCPRange with_room(const QCPRange& range, double room, int pixels, bool keep_zero) {
    if (room <= 0 || pixels <= 2 * room + 10) return range;
    const double per_pixel = range.size() / (pixels - 2 * room);
    return QCPRange(keep_zero && range.lower == 0.0 ? 0.0 : range.lower - room * per_pixel, range.upper + room * per_pixel);
}

double point_radius(const QCPGraph* g) {
    const double marker = g->scatterStyle().isNone() ? 0.0 : g->scatterStyle().size() / 2.0;
    return std::max(marker, g->pen().widthF() / 2.0) + 1.0;
}

namespace {

// Calls `each(graph, key, value)` for every finite point of the visible graphs.
template <typename F>
void for_each_point(QCustomPlot* plot, F each) {
    for (int i = 0; i < plot->graphCount(); ++i) {
        auto* g = plot->graph(i);
        if (!g->visible()) continue;
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
            if (std::isfinite(it->key) && std::isfinite(it->value)) each(g, it->key, it->value);
    }
}

bool covers(QCustomPlot* plot, const QRectF& rect) {
    bool covered = false;
    for_each_point(plot, [&](QCPGraph* g, double key, double value) {
        if (covered) return;
        const QPointF p(g->keyAxis()->coordToPixel(key), g->valueAxis()->coordToPixel(value));
        const double r = point_radius(g);
        if (rect.adjusted(-r, -r, r, r).contains(p)) covered = true;
    });
    return covered;
}

} // namespace

bool graphs_extent(QCustomPlot* plot, const QCPAxis* value_axis, QCPRange* keys, QCPRange* values) {
    bool found = false;
    for_each_point(plot, [&](QCPGraph* g, double key, double value) {
        if (g->valueAxis() != value_axis) return;
        if (!found) {
            *keys = QCPRange(key, key);
            *values = QCPRange(value, value);
            found = true;
            return;
        }
        keys->expand(key);
        values->expand(value);
    });
    return found;
}

void lay_out(QCustomPlot* plot) {
    plot->plotLayout()->setOuterRect(plot->viewport());
    plot->plotLayout()->update(QCPLayoutElement::upPreparation);
    plot->plotLayout()->update(QCPLayoutElement::upMargins);
    plot->plotLayout()->update(QCPLayoutElement::upLayout);
}

bool legend_to_free_corner(QCustomPlot* plot, std::initializer_list<Qt::Alignment> corners) {
    auto* inset = plot->axisRect()->insetLayout();
    int index = -1;
    for (int i = 0; i < inset->elementCount(); ++i)
        if (inset->elementAt(i) == plot->legend) index = i;
    if (index < 0) return false; // the legend is outside the axis rect
    lay_out(plot);
    const QRect area = inset->rect(); // the axis rect less the inset layout's margins
    const QSize size = plot->legend->minimumOuterSizeHint();
    for (const auto corner : corners) {
        const int x = corner & Qt::AlignLeft ? area.left() : area.right() + 1 - size.width();
        const int y = corner & Qt::AlignTop ? area.top() : area.bottom() + 1 - size.height();
        if (!covers(plot, QRectF(QPointF(x, y), QSizeF(size)))) {
            inset->setInsetAlignment(index, corner);
            return true;
        }
    }
    return false;
}

bool legend_covers_a_point(QCustomPlot* plot) {
    if (!plot->legend->visible()) return false;
    return covers(plot, QRectF(plot->legend->outerRect()));
}

QStringList legend_entry_problems(QCustomPlot* plot) {
    QStringList found;
    auto* legend = plot->legend;
    if (!legend || !legend->visible()) return found;
    const QRect legend_rect = legend->outerRect(), viewport = plot->viewport();
    std::vector<std::pair<QString, QRect>> entries;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = legend->item(i); item && item->visible()) {
            auto* plottable = qobject_cast<QCPPlottableLegendItem*>(item);
            // What is drawn: the entry's icon and text at the top of the cell the
            // layout gives it, which may be taller (rows share spare height, rounded up).
            const QSize drawn = item->minimumOuterSizeHint().boundedTo(item->rect().size());
            entries.emplace_back(plottable ? plottable->plottable()->name() : QStringLiteral("#%1").arg(i),
                                 QRect(item->rect().topLeft(), drawn));
        }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& [name, r] = entries[i];
        if (!legend_rect.contains(r) || !viewport.contains(r))
            found << QStringLiteral("the legend entry \"%1\" at %2,%3 %4x%5 runs out of the %6 at %7,%8 %9x%10")
                         .arg(name)
                         .arg(r.x())
                         .arg(r.y())
                         .arg(r.width())
                         .arg(r.height())
                         .arg(legend_rect.contains(r) ? QStringLiteral("plot") : QStringLiteral("legend"))
                         .arg((legend_rect.contains(r) ? viewport : legend_rect).x())
                         .arg((legend_rect.contains(r) ? viewport : legend_rect).y())
                         .arg((legend_rect.contains(r) ? viewport : legend_rect).width())
                         .arg((legend_rect.contains(r) ? viewport : legend_rect).height());
        for (std::size_t j = i + 1; j < entries.size(); ++j)
            if (r.intersects(entries[j].second))
                found << QStringLiteral("the legend entries \"%1\" and \"%2\" overlap").arg(name, entries[j].first);
    }
    return found;
}

void wrap_legend_to_height(QCustomPlot* plot) {
    auto* legend = plot->legend;
    lay_out(plot);
    int entry = 0, count = 0;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = legend->item(i)) {
            // Its hint, not the height a layout gave it: rows share the legend's
            // spare height (stretched in one row, an entry would count as all).
            entry = std::max(entry, item->minimumOuterSizeHint().height());
            ++count;
        }
    // The height the layout gives the legend beside the axis rect: the row's,
    // however tall the legend would like to be (the layout does not grow a row
    // past the plot).
    const int room = legend->outerRect().height() - legend->margins().top() - legend->margins().bottom();
    const int step = entry + legend->rowSpacing();
    const int rows = step > 0 ? std::max(1, (room - entry) / step + 1) : count;
    // Rows first, a column holding `wrap` entries; the columns share them evenly.
    const int columns = rows < count ? (count + rows - 1) / rows : 1;
    const int wrap = columns > 1 ? (count + columns - 1) / columns : 0;
    if (legend->wrap() == wrap && legend->fillOrder() == QCPLayoutGrid::foRowsFirst) return;
    legend->setWrap(wrap);
    legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
    lay_out(plot);
}

void legend_names_on_lines(QCustomPlot* plot, bool two_lines) {
    constexpr int kLongest = 18; // characters on one line before a name is broken
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
        auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i));
        if (!item) continue;
        QString name = item->plottable()->name();
        name.replace(QLatin1Char('\n'), QLatin1Char(' '));
        if (two_lines && name.size() > kLongest) {
            // The break whose longer line is the shortest.
            int best = -1;
            for (int at = name.indexOf(QLatin1Char(' ')); at >= 0; at = name.indexOf(QLatin1Char(' '), at + 1))
                if (best < 0 || std::max(at, int(name.size()) - at - 1) < std::max(best, int(name.size()) - best - 1))
                    best = at;
            if (best > 0) name[best] = QLatin1Char('\n');
        }
        if (item->plottable()->name() != name) item->plottable()->setName(name);
    }
}

QCPRange decades_around(double lowest, double highest) {
    return QCPRange(std::pow(10.0, std::floor(std::log10(std::max(lowest, 1e-300))) - 0.5),
                    std::pow(10.0, std::ceil(std::log10(std::max(highest, 1e-300))) + 0.5));
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
