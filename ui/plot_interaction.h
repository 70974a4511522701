#pragma once
// What the studio's plots share: where the legend sits, how a plot frames its
// data, and how zooming or panning freezes the view until a double click
// returns it to auto-fit.

#include <functional>
#include <initializer_list>

#include <QStringList>
#include <Qt>

class QCPAxis;
class QCPGraph;
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

// The value range that frames data from `lowest` to `highest`: a margin of 8 %
// of the span each side, reaching down to 0 only when 0 is near (the lowest value
// within a quarter of the span above it). Losses between 0.6 and 0.7 fill the
// plot; losses falling from 2.3 to 0.3 keep the axis' 0.
QCPRange framed_range(double lowest, double highest);

// `range` widened so that, on an axis `pixels` long, `room` pixels at each end
// hold no data: a marker `2 × room` wide centred on the last point stays inside.
// With `keep_zero`, a lower end at 0 stays at 0 (where framed_range put it).
QCPRange with_room(const QCPRange& range, double room, int pixels, bool keep_zero = true);

// The pixels a graph's point takes around its centre: half its marker, at least
// half its pen.
double point_radius(const QCPGraph* graph);

// The keys and the values of the visible graphs of `plot` on `value_axis` (NaN
// and infinite points left out); false when there is no point.
bool graphs_extent(QCustomPlot* plot, const QCPAxis* value_axis, QCPRange* keys, QCPRange* values);

// Lays the plot out now (ranges and legend as they are set), so that pixel
// positions can be asked before the next replot.
void lay_out(QCustomPlot* plot);

// The legend inside the axis rect, in the first of `corners` where it covers no
// point of a visible graph (nor the marker drawn around it); false, leaving it
// where it was, when every corner covers one. Lays the plot out first.
bool legend_to_free_corner(QCustomPlot* plot, std::initializer_list<Qt::Alignment> corners);

// Whether the legend's rectangle covers a point of a visible graph (after a replot
// or lay_out): what the tests check.
bool legend_covers_a_point(QCustomPlot* plot);

// The legend's entries that cannot be read (after a replot or lay_out): one whose
// drawn icon and text overlap another's, or run out of the legend or of the plot. Empty
// when every entry stands clear; what presentation mode's tests check.
QStringList legend_entry_problems(QCustomPlot* plot);

// A legend beside the axis rect, its entries in as many columns as it takes for
// the rows to fit the axis rect's height (one column when they do). Lays the
// plot out.
void wrap_legend_to_height(QCustomPlot* plot);

// The legend's entries on one line each, or (two_lines) a long one broken at the
// space nearest its middle: a legend beside the curves in large text then takes
// the width of half its longest entry. The plottables' names change.
void legend_names_on_lines(QCustomPlot* plot, bool two_lines);

// Whole decades around [lowest, highest] (half a decade of margin each side),
// so that a halving of the loss scale reads as a step on a log axis.
QCPRange decades_around(double lowest, double highest);

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
