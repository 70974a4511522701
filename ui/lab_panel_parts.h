// SPDX-License-Identifier: GPL-3.0-or-later
// What the lab panel's two files share (lab_panel.cpp: the widget and its
// verdict; lab_panel_views.cpp: the table, the plots and the memory bars): the
// table's columns, the plot's y-axis choices, the |Δ loss| panel's floor and a
// cell's number. Included by those two files only.
#pragma once

#include <QString>
#include <cmath>

namespace studio::lab_parts {

// The |Δ loss| panel's floor: bit-identical updates (Δ = 0) are drawn on it.
constexpr double kDeltaFloor = 1e-9;

// Table columns.
enum Column { RunColumn, BatchColumn, FinalLossColumn, DeltaColumn, AccuracyColumn, TimeColumn, MemoryColumn,
              SpeedColumn, AllReducesColumn, TimePerUpdateColumn, PeakActivationsColumn,
              OptimizerStepColumn, SkippedColumn, ColumnCount };

// The plot's y-axis choices, in the combo box's order.
enum YAxisChoice { LossAxis, LearningRateAxis, LossScaleAxis };

inline QString number_or_dash(double v, int precision, char format = 'f') {
    return std::isfinite(v) ? QString::number(v, format, precision) : QStringLiteral("–");
}

} // namespace studio::lab_parts
