#pragma once
// Presentation mode for a plot: its text, lines and markers drawn larger for a
// room, and back. capture() remembers the plot's desk look (fonts of axes,
// legend, titles and labels; pens of graphs, axes and items; marker sizes);
// apply(scale) draws all of it `scale` times its desk size, apply(1) restores it.
// A graph added after capture() is drawn by its owner, which asks scale().

#include <QFont>
#include <QPen>
#include <QPointer>
#include <QSize>
#include <vector>

class QCustomPlot;
class QCPAbstractItem;
class QCPAxis;
class QCPGraph;
class QCPLegend;
class QCPTextElement;

namespace studio {

class PlotLook {
public:
    void capture(QCustomPlot* plot);
    void apply(double scale);
    double scale() const { return scale_; }

    // A font `scale` times as large as `font` (point or pixel size, whichever it has).
    static QFont scaled(const QFont& font, double scale);

private:
    struct AxisLook {
        QPointer<QCPAxis> axis;
        QFont label, ticks;
        QPen base, tick, sub_tick;
        int tick_length_in = 0, tick_length_out = 0, label_padding = 0, tick_label_padding = 0;
    };
    struct GraphLook {
        QPointer<QCPGraph> graph;
        QPen pen;
        double marker_size = 0;
        QPen marker_pen;
    };
    struct TextLook {
        QPointer<QCPTextElement> element;
        QFont font;
    };
    struct ItemLook {
        QPointer<QCPAbstractItem> item;
        QFont font; // QCPItemText
        QPen pen;   // lines
        QMargins padding;
    };

    QPointer<QCustomPlot> plot_;
    std::vector<AxisLook> axes_;
    std::vector<GraphLook> graphs_;
    std::vector<TextLook> texts_;
    std::vector<ItemLook> items_;
    QFont legend_font_;
    QSize legend_icon_;
    double scale_ = 1.0;
};

} // namespace studio
