#pragma once
// What the studio's plots share: where the legend sits, and how zooming or
// panning freezes the view until a double click returns it to auto-fit.

#include <functional>

#include <Qt>

class QCPAxis;
class QCPRange;
class QCustomPlot;
class QObject;
class QString;

namespace studio {

// The legend inside the plot, in the corner `corner` (Qt::AlignTop | Qt::AlignRight,
// …), its entries in `columns` columns: a plot only a hundred pixels high keeps
// its data visible beside a legend of two rows, not one of four.
void place_legend(QCustomPlot* plot, Qt::Alignment corner, int columns = 1);

// Live plots redraw while the engine trains on the same cores: draw polylines
// without joins and cache axis labels.
void use_fast_drawing(QCustomPlot* plot);

// Mouse press or wheel sets *auto_range to false; a double click sets it back
// to true and calls `refit`. `context` owns the connections.
void freeze_view_on_interaction(QCustomPlot* plot, QObject* context, bool* auto_range, std::function<void()> refit);

// A loss scale's axis: logarithmic, ticks at powers of ten written as 10^n.
void use_scale_axis(QCPAxis* axis, const QString& label);

// Whole decades around [lowest, highest] (half a decade of margin each side),
// so that a halving of the loss scale reads as a step on a log axis.
QCPRange decades_around(double lowest, double highest);

} // namespace studio
