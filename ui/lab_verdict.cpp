// SPDX-License-Identifier: GPL-3.0-or-later
#include "lab_verdict.h"

#include <QStringList>
#include <algorithm>

#include "engine_text.h"
#include "engine_use.h"
#include "lab_stats.h"
#include "lab_panel_parts.h"
#include "noise_scale.h"

namespace studio {

using lab_parts::number_or_dash;

QString LabVerdict::planned(std::size_t count) { return tr("Running %1 runs one after another…").arg(count); }

QString LabVerdict::running(int index, int count, const QString& label) {
    return tr("Run %1 of %2: %3…").arg(index + 1).arg(count).arg(label);
}

namespace {

// A largest |Δ loss| as the verdicts write it.
QString delta_text(double worst) {
    return worst == 0.0 ? LabVerdict::tr("0 (bit-identical)") : number_or_dash(worst, 2, 'e');
}

} // namespace

QString LabVerdict::losses(double worst) {
    const QString worst_text = delta_text(worst);
    return worst < kSameLossTolerance ? tr("Same losses: largest |Δ loss| %1.").arg(worst_text)
                                      : tr("Losses apart by up to %1, above float rounding: the same sums in another "
                                           "order, the difference grown by training.")
                                            .arg(worst_text);
}

QString LabVerdict::finished(Experiment experiment, const std::vector<RunResult>& runs) {
    const double worst = max_pairwise_loss_difference(runs);
    const QString worst_text = delta_text(worst);
    const QString losses = LabVerdict::losses(worst);
    const bool completed = std::all_of(runs.begin(), runs.end(), [](const RunResult& r) {
        return r.summary.status == accum::RunStatus::Completed;
    });
    QString text;
    const auto refused = std::find_if(runs.begin(), runs.end(),
                                      [](const RunResult& r) { return engine_refused_as_busy(r.summary); });
    if (refused != runs.end()) {
        text = tr("Run “%1” did not start: %2").arg(refused->label, engine_message(refused->summary));
    } else if (!completed) {
        text = tr("Not every run completed; see the status column of the Runs tab.");
    } else if (experiment == Experiment::CompareStyles) {
        const auto steps = runs.empty() ? 0 : runs.front().steps.size();
        text = worst < kSameLossTolerance
                   ? tr("Largest |Δ loss| between any two styles over %1 updates: %2 — the same trajectory.")
                         .arg(steps)
                         .arg(worst_text)
                   : tr("Largest |Δ loss| between styles: %1 — they differ (partial windows? dropout?).").arg(worst_text);
    } else if (experiment == Experiment::NoSyncVsSyncEach && runs.size() == 2) {
        // Each update after the warm-up: the median and its quartiles (update_timing).
        auto ms = [](const RunResult& r) {
            const auto t = update_timing(r);
            return with_spread(1000.0 * t.seconds, 1000.0 * t.seconds_low, 1000.0 * t.seconds_high);
        };
        text = losses + QLatin1Char(' ') +
               tr("All-reduces per update: %1 with no_sync, %2 syncing every micro-batch; time per update %3 ms vs "
                  "%4 ms.")
                   .arg(allreduces_per_update(runs[0]), 0, 'g', 3)
                   .arg(allreduces_per_update(runs[1]), 0, 'g', 3)
                   .arg(ms(runs[0]), ms(runs[1]));
    } else if (experiment == Experiment::CompareAccumulation && runs.size() >= 2) {
        QStringList memory, activations, speed;
        for (const auto& r : runs) {
            memory << format_bytes(r.summary.peak_memory_bytes);
            activations << format_bytes(r.peak_activations_bytes());
            const auto t = update_timing(r); // the warm-up left out, rounded to the spread
            speed << rounded_to_spread(t.samples_per_second, t.samples_low, t.samples_high);
        }
        text = losses + QLatin1Char('\n') +
               tr("Peak memory %1 (activations %2) · samples/s %3.")
                   .arg(memory.join(QStringLiteral(" → ")), activations.join(QStringLiteral(" → ")),
                        speed.join(QStringLiteral(" → ")));
        // At the smallest micro-batch (the last run) the optimizer step's
        // temporaries, not the activations, set the peak: smaller saves no more.
        const auto& smallest = runs.back();
        if (memory_bands(smallest).optimizer_step_bytes > 0)
            text += QLatin1Char(' ') + tr("The optimizer step's temporaries (%1) are the floor: a smaller "
                                          "micro-batch saves no more.")
                                           .arg(format_bytes(smallest.peak_optimizer_step_bytes()));
    } else if (experiment == Experiment::PitfallLossScale && runs.size() == 2 && !runs[0].steps.empty() &&
               !runs[1].steps.empty()) {
        text = tr("Once per window: %1 of %2 updates skipped for overflow (✕), S %3 → %4. Per micro-batch: %5 of %6 "
                  "skipped, S → %7. Largest |Δ loss| between them: %8.")
                   .arg(skipped_updates(runs[0]))
                   .arg(runs[0].steps.size())
                   .arg(runs[0].config.loss_scale_init, 0, 'g', 2)
                   .arg(runs[0].steps.back().loss_scale, 0, 'g', 2)
                   .arg(skipped_updates(runs[1]))
                   .arg(runs[1].steps.size())
                   .arg(runs[1].steps.back().loss_scale, 0, 'g', 2)
                   .arg(worst_text);
    } else if (experiment == Experiment::NoiseScale && runs.size() == 2) {
        text = noise_comparison_text(compare_noise_runs(runs[0], runs[1]));
    } else if (experiment == Experiment::MemoryLevers && runs.size() >= 2) {
        QStringList activations, speed;
        for (const auto& r : runs) {
            activations << format_bytes(r.peak_activations_bytes());
            const auto t = update_timing(r);
            speed << rounded_to_spread(t.samples_per_second, t.samples_low, t.samples_high);
        }
        const auto bands = memory_bands(runs.front());
        text = losses + QLatin1Char('\n') +
               tr("Peak activations %1 · parameters, gradients and optimizer state %2 in every run · samples/s %3.")
                   .arg(activations.join(QStringLiteral(" → ")),
                        format_bytes(bands.parameters_bytes + bands.gradients_bytes + bands.optimizer_state_bytes),
                        speed.join(QStringLiteral(" → ")));
    } else if (runs.size() >= 2) {
        // A pitfall: each variant against the reference, the first run.
        QStringList parts;
        for (std::size_t i = 1; i < runs.size(); ++i) {
            const double d = studio::max_loss_difference(runs.front(), runs[i]);
            parts << tr("%1: %2").arg(runs[i].label, d == 0.0 ? tr("0 (bit-identical)") : number_or_dash(d, 1, 'e'));
        }
        text = tr("Largest |Δ loss| against “%1” — %2.").arg(runs.front().label, parts.join(QStringLiteral(" · ")));
    } else {
        text = tr("Largest |Δ loss| between the variants: %1.").arg(worst_text);
    }
    return text;
}

} // namespace studio
