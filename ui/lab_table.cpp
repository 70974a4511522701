// SPDX-License-Identifier: GPL-3.0-or-later
#include "lab_table.h"

#include <QHeaderView>
#include <algorithm>

#include "lab_stats.h"
#include "plot_look.h"
#include "lab_panel_parts.h"

namespace studio {

using namespace lab_parts;

namespace {

QString batching(const accum::RunConfig& c) {
    if (c.world_size() > 1)
        return QStringLiteral("%1 × %2 × %3 = %4")
            .arg(c.batch_size)
            .arg(c.accumulation_steps)
            .arg(c.world_size())
            .arg(c.effective_batch());
    return QStringLiteral("%1 × %2 = %3").arg(c.batch_size).arg(c.accumulation_steps).arg(c.effective_batch());
}

// "2 (S → 8.5e+37)": the updates skipped and the loss scale the run ended with.
QString skipped_text(const RunResult& r) {
    if (!r.config.uses_loss_scaler() || r.steps.empty()) return QStringLiteral("–");
    return LabTable::tr("%1 (S → %2)").arg(skipped_updates(r)).arg(r.steps.back().loss_scale, 0, 'g', 2);
}

} // namespace

LabTable::LabTable(QWidget* parent) : QTableWidget(0, ColumnCount, parent) {
    setObjectName(QStringLiteral("lab_table"));
    retranslate();
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    verticalHeader()->setVisible(false);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setAlternatingRowColors(true);
    setMinimumHeight(130);
    // A run's meaning is at the end of its name ("… (wrong)", "… (right)"): cut the
    // middle (a wrapped cell would cut its first line at the end instead).
    setTextElideMode(Qt::ElideMiddle);
    setWordWrap(false);
}

void LabTable::retranslate() {
    setHorizontalHeaderLabels({tr("Run"), tr("B × K = effective"), tr("Final loss"), tr("max |Δ loss| vs first"),
                               tr("Final accuracy"), tr("Time (s)"), tr("Peak memory"), tr("Samples/s"),
                               tr("All-reduces / update"), tr("Time / update (ms)"), tr("Peak activations"),
                               tr("Optimizer step"), tr("Skipped updates")});
}

void LabTable::fill(const std::vector<RunResult>& runs, bool presentation) {
    setRowCount(int(runs.size()));
    // In front of a class the run's name, its shape and the columns that make the
    // experiment's point; the time and the accuracy (the lesson's bar says what
    // they show) give the name their room.
    setColumnHidden(TimeColumn, presentation);
    // No evaluation in any run (a short demo): no column of dashes.
    setColumnHidden(AccuracyColumn, presentation || std::none_of(runs.begin(), runs.end(), [](const RunResult& r) {
                                                return !r.evals.empty();
                                            }));
    // Communication columns for runs of several processes only.
    const bool data_parallel =
        std::any_of(runs.begin(), runs.end(), [](const RunResult& r) { return r.config.world_size() > 1; });
    setColumnHidden(AllReducesColumn, !data_parallel);
    setColumnHidden(TimePerUpdateColumn, !data_parallel);
    // In front of a class runs of several processes make a point about
    // communication; their memory is alike (each process holds the whole model),
    // and at 1280 × 720 the memory columns pushed the time per update out of view.
    const bool memory_aside = presentation && data_parallel;
    setColumnHidden(MemoryColumn, memory_aside);
    setColumnHidden(PeakActivationsColumn, memory_aside);
    setColumnHidden(OptimizerStepColumn, memory_aside);
    // Updates a loss scaler skipped (overflow), and the scale at the end: only for runs that scale.
    setColumnHidden(SkippedColumn, std::none_of(runs.begin(), runs.end(),
                                                        [](const RunResult& r) { return r.config.uses_loss_scaler(); }));
    for (int row = 0; row < int(runs.size()); ++row) {
        const auto& r = runs[static_cast<std::size_t>(row)];
        const double delta = row == 0 ? 0.0 : studio::max_loss_difference(runs.front(), r);
        // Speeds without the warm-up, rounded to their spread; the spread in the tooltip.
        const auto timing = update_timing(r);
        const QStringList cells = {r.label,
                                   batching(r.config),
                                   number_or_dash(r.final_loss(), 4),
                                   row == 0 ? QStringLiteral("—") : number_or_dash(delta, 2, 'e'),
                                   number_or_dash(r.final_accuracy(), 4),
                                   number_or_dash(r.summary.train_runtime_s, 2),
                                   format_bytes(r.summary.peak_memory_bytes),
                                   rounded_to_spread(timing.samples_per_second, timing.samples_low,
                                                     timing.samples_high),
                                   QString::number(allreduces_per_update(r), 'g', 3),
                                   rounded_to_spread(1000.0 * timing.seconds, 1000.0 * timing.seconds_low,
                                                     1000.0 * timing.seconds_high),
                                   format_bytes(r.peak_activations_bytes()),
                                   format_bytes(r.peak_optimizer_step_bytes()),
                                   skipped_text(r)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setTextAlignment(c == 0 ? (Qt::AlignLeft | Qt::AlignVCenter) : Qt::AlignCenter);
            if (c == 0) item->setForeground(run_colour(row));
            if (c == 0) item->setToolTip(r.label); // the whole name, where the column cuts its middle
            if (c == SpeedColumn)
                item->setToolTip(tr("median of %1 updates after the first %2 (quartiles %3)")
                                     .arg(timing.updates)
                                     .arg(kLabWarmupUpdates)
                                     .arg(with_spread(timing.samples_per_second, timing.samples_low,
                                                      timing.samples_high)));
            if (c == TimePerUpdateColumn)
                item->setToolTip(tr("median of %1 updates after the first %2 (quartiles %3)")
                                     .arg(timing.updates)
                                     .arg(kLabWarmupUpdates)
                                     .arg(with_spread(1000.0 * timing.seconds, 1000.0 * timing.seconds_low,
                                                      1000.0 * timing.seconds_high)));
            setItem(row, c, item);
        }
    }
}

} // namespace studio
