// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The gradient noise scale (McCandlish et al. 2018, "An Empirical Model of
// Large-Batch Training"; docs/noise-scale.md) in the studio's words: the live
// readout ("noise scale ≈ 120 samples; your effective batch 256 = 2.1 × that")
// and the planner's advice for a target effective batch against a measured
// noise scale. Only the paper's model is claimed, and as an estimate: to reach
// a given loss, an effective batch B takes S = S_min (1 + B_noise / B) steps
// and E = E_min (1 + B / B_noise) samples. Plain functions, no widgets.

#include <QString>
#include <cstdint>

#include "run_result.h"

namespace studio {

// Where an effective batch sits against the noise scale: below half of it, above
// twice it, or near it.
enum class NoiseRegime { Below, Near, Above };

struct NoiseAdvice {
    double noise_scale = 0.0;     // measured, in samples (or tokens)
    double effective_batch = 0.0; // the target, in the same unit
    double ratio = 0.0;           // effective_batch / noise_scale
    NoiseRegime regime = NoiseRegime::Near;
    double steps_factor = 0.0;    // S / S_min = 1 + 1 / ratio
    double samples_factor = 0.0;  // E / E_min = 1 + ratio
    // Above it: the smaller K whose effective batch is nearest the noise scale
    // (accum-run plan --noise-scale's), and its steps and samples as a fraction of
    // the target's; 0 when no smaller K is.
    std::int64_t smaller_k = 0;
    double smaller_effective_batch = 0.0;
    double smaller_steps_vs_target = 0.0;   // more than 1: a few more steps
    double smaller_samples_vs_target = 0.0; // less than 1: fewer samples
};

// The advice for an effective batch of K accumulation steps (micro-batch × K ×
// processes, in the noise scale's unit) against a measured noise scale; no
// ratio (0) when the noise scale is not a positive number.
NoiseAdvice noise_advice(double noise_scale, double effective_batch, std::int64_t accumulation_steps);
bool noise_scale_known(double noise_scale); // finite and above 0

// A figure at two significant digits: 120, 2.1, 0.35.
QString noise_figure(double value);
// "Noise scale ≈ 120 samples; your effective batch 256 = 2.1 × that." (tokens
// with token normalisation).
QString noise_readout_text(double noise_scale, double effective_batch, bool tokens);
// One sentence: what the regime means for steps and samples.
QString noise_meaning_text(NoiseRegime regime);
// The planner's lines for `advice`; `source` names where the noise scale was
// measured ("the live run", a run's name). Labelled an estimate.
QString noise_advice_text(const NoiseAdvice& advice, const QString& source, bool tokens);

// The run's last running noise scale: its summary's, else its last step
// record's that has one; NaN when it measured none.
double measured_noise_scale(const RunResult& run);
// The same in samples: a token-normalised run's figure divided by its tokens per
// sample (its last window's tokens over its effective batch); NaN when unknown.
double measured_noise_scale_in_samples(const RunResult& run);
// The effective batch in the noise scale's unit: the configuration's
// (samples), or with token normalisation the windows' tokens (the step
// records' batch_big, the last measured); 0 when unknown.
double effective_batch_for_noise(const accum::RunConfig& config, const accum::StepRecord* last_step);

// The noise-scale experiment's two runs side by side (lab_plan.h): the small
// effective batch first, the big one second, on the same samples.
struct NoiseComparison {
    bool valid = false; // two runs with step records
    double effective_small = 0, effective_big = 0;
    std::int64_t steps_small = 0, steps_big = 0;
    std::int64_t samples_small = 0, samples_big = 0;
    double noise_small = 0, noise_big = 0; // each run's last running estimate, NaN when none
    double noise_scale = 0;                // the big run's (near the start), else the small one's; NaN: none
    // The mean window loss over the last quarter of the samples (at least the big
    // run's last window): how far each got on the same samples.
    std::int64_t tail_samples = 0;
    double tail_loss_small = 0, tail_loss_big = 0;
};
NoiseComparison compare_noise_runs(const RunResult& small, const RunResult& big);
// "Both saw 5120 samples: 16 per update took 320 updates, 512 per update 10 —
// 32 × fewer. …" (the lab's verdict and the lesson's).
QString noise_comparison_text(const NoiseComparison& c);

} // namespace studio
