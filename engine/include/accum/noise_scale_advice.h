#pragma once
// What a measured gradient noise scale says about a target effective batch,
// under the model of McCandlish et al. (2018): to reach a given loss, a run of
// effective batch B takes S = S_min (1 + B_noise / B) optimizer steps and
// E = E_min (1 + B / B_noise) samples, so (S/S_min − 1)(E/E_min − 1) = 1, with
// the critical batch B_crit ≈ B_noise (the simple noise scale). Estimates: the
// model assumes SGD-like updates and a noise scale that stays where it was
// measured (docs/noise-scale.md). Torch-free, for accum-run plan and the studio.

#include <cstdint>
#include <optional>
#include <string>

namespace accum {

struct NoiseScaleAdvice {
    double noise_scale = 0;              // B_noise, samples (tokens for a token-normalised run)
    std::int64_t target_batch = 0;       // the effective batch asked about
    std::int64_t batch_size = 0;         // its micro-batch
    double ratio = 0;                    // target_batch / noise_scale
    // Where it sits: "below" (under ½ B_noise: a bigger batch still cuts the steps
    // nearly in proportion), "near" (½ to 2 ×), "above" (over 2 ×: most of the
    // extra samples buy few steps).
    std::string position;
    double steps_over_min = 0;           // S / S_min at the target
    double samples_over_min = 0;         // E / E_min at the target
    // Above: the smaller K whose effective batch batch_size × K is nearest the
    // noise scale, and its predicted steps and samples against the target's.
    std::int64_t suggested_accumulation_steps = 0; // 0: no suggestion
    std::int64_t suggested_effective_batch = 0;
    double suggested_steps_ratio = 0;    // its steps / the target's steps (> 1)
    double suggested_samples_ratio = 0;  // its samples / the target's samples (< 1)
    std::string message;                 // the advice in one paragraph, labelled an estimate
};

// `noise_scale` positive and finite, `target_batch` ≥ 1, `batch_size` ≥ 1.
NoiseScaleAdvice advise_effective_batch(double noise_scale, std::int64_t target_batch, std::int64_t batch_size);

// The last running noise scale of a finished run: `path` is its run directory
// (its summary.json) or the summary.json itself. Nothing, with `error` naming
// the file and the reason, when it cannot be read or holds no measured noise scale.
std::optional<double> read_noise_scale(const std::string& path, std::string& error);

std::string to_json_text(const NoiseScaleAdvice& advice);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
