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
class QWidget;

namespace studio {

class PlotLook {
public:
    void capture(QCustomPlot* plot);
    void apply(double scale);
    double scale() const { return scale_; }

    // A font `scale` times as large as `font` (point or pixel size, whichever it has).
    static QFont scaled(const QFont& font, double scale);
    // The same, and at least `least_pixels` high (0: no floor).
    static QFont scaled(const QFont& font, double scale, int least_pixels);
    // Presentation mode's least text height on the screen `widget` is on: 1/40 of
    // its height (18 px at 720 lines, 27 at 1080; ui/screen_fit.h).
    static int least_text_pixels(const QWidget* widget);
    // Fewer ticks for larger text, so that the labels do not overlap: the ticker's
    // count (5, QCustomPlot's) divided by `scale`, at least 3; a ticker set after
    // apply() (a rebuilt plot) is given its count by its owner through this.
    static void fit_tick_count(QCPAxis* axis, double scale);
    // Presentation mode keeps the legend, outside the plot's area (true): below it in
    // `columns` columns, or (columns 0) beside it on the right, one entry a row,
    // where a short plot has no height to spare; false puts it back in its corner.
    static void legend_below(QCustomPlot* plot, bool below, int columns = 3);

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

// A run's colour by its index (the curve, its table row's name, its bars): one
// palette for the lab, the runs list and the link curve, repeating after eight.
QColor run_colour(int index);
// A memory band's colour, bottom to top: parameters, gradients, optimizer state,
// activations, the optimizer step's temporaries (the live memory plot and the lab's bars).
QColor memory_band_colour(int band);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
