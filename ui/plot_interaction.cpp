#include "plot_interaction.h"

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

} // namespace studio
