#pragma once
// What the studio's plots share: where the legend sits, and how zooming or
// panning freezes the view until a double click returns it to auto-fit.

#include <functional>

class QCustomPlot;
class QObject;

namespace studio {

void place_legend_top_right(QCustomPlot* plot);

// Live plots redraw while the engine trains on the same cores: draw polylines
// without joins and cache axis labels.
void use_fast_drawing(QCustomPlot* plot);

// Mouse press or wheel sets *auto_range to false; a double click sets it back
// to true and calls `refit`. `context` owns the connections.
void freeze_view_on_interaction(QCustomPlot* plot, QObject* context, bool* auto_range, std::function<void()> refit);

} // namespace studio
