// SPDX-License-Identifier: GPL-3.0-or-later
// What the lab panel's two files share (lab_panel.cpp: the widget and its
// verdict; lab_panel_views.cpp: the table, the plots and the memory bars): the
// run colours, the table's columns, the plot's y-axis choices and the cells'
// formatting. Included by those two files only.
#pragma once

#include <QColor>
#include <QList>
#include <QString>
#include <cmath>

#include "lab_panel.h"
#include "run_result.h"

namespace studio::lab_parts {

inline const QList<QColor>& run_colours() {
    static const QList<QColor> colours = {QColor(0x1f77b4), QColor(0xd62728), QColor(0x2ca02c),
                                          QColor(0x9467bd), QColor(0xff7f0e), QColor(0x8c564b)};
    return colours;
}

// The |Δ loss| panel's floor: bit-identical updates (Δ = 0) are drawn on it.
constexpr double kDeltaFloor = 1e-9;
// Float rounding: runs within this of each other are the same (ARCHITECTURE.md I1).
constexpr double kRoundingLevel = 1e-5;

inline QString batching(const accum::RunConfig& c) {
    if (c.world_size() > 1)
        return QStringLiteral("%1 × %2 × %3 = %4")
            .arg(c.batch_size)
            .arg(c.accumulation_steps)
            .arg(c.world_size())
            .arg(c.effective_batch());
    return QStringLiteral("%1 × %2 = %3").arg(c.batch_size).arg(c.accumulation_steps).arg(c.effective_batch());
}

// Table columns.
enum Column { RunColumn, BatchColumn, FinalLossColumn, DeltaColumn, AccuracyColumn, TimeColumn, MemoryColumn,
              SpeedColumn, AllReducesColumn, TimePerUpdateColumn, PeakActivationsColumn,
              OptimizerStepColumn, SkippedColumn, ColumnCount };

// The plot's y-axis choices, in the combo box's order.
enum YAxisChoice { LossAxis, LearningRateAxis, LossScaleAxis };

inline QString number_or_dash(double v, int precision, char format = 'f') {
    return std::isfinite(v) ? QString::number(v, format, precision) : QStringLiteral("–");
}

// "2 (S → 8.5e+37)": the updates skipped and the loss scale the run ended with.
inline QString skipped_text(const RunResult& r) {
    if (!r.config.uses_loss_scaler() || r.steps.empty()) return QStringLiteral("–");
    return LabPanel::tr("%1 (S → %2)").arg(skipped_updates(r)).arg(r.steps.back().loss_scale, 0, 'g', 2);
}


} // namespace studio::lab_parts
