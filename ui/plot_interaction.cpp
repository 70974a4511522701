#include "plot_interaction.h"

#include <algorithm>
#include <cmath>

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

QCPRange decades_around(double lowest, double highest) {
    return QCPRange(std::pow(10.0, std::floor(std::log10(std::max(lowest, 1e-300))) - 0.5),
                    std::pow(10.0, std::ceil(std::log10(std::max(highest, 1e-300))) + 0.5));
}

} // namespace studio
