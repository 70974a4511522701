// SPDX-License-Identifier: GPL-3.0-or-later
// What the lab's parts share (lab_charts.cpp: the plots and the memory bars;
// lab_table.cpp: the table; lab_verdict.cpp): the table's columns, the
// |Δ loss| panel's floor and a cell's number. Included by those files only.
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

inline QString number_or_dash(double v, int precision, char format = 'f') {
    return std::isfinite(v) ? QString::number(v, format, precision) : QStringLiteral("–");
}

} // namespace studio::lab_parts
