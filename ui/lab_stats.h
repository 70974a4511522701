// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the lab reads from a run's records for its table, charts and verdict
// (lab_stats.cpp): the memory bands, the time per update and its spread, the
// all-reduces and the skipped updates. No widget: the lab's parts and the
// runs list include it alone.

#include <QString>
#include <cstdint>

#include "run_result.h"

namespace studio {

// One run's memory as the lab's bars stack it, bottom to top: parameters,
// gradients and optimizer state at the step's peak, and the peak of activations.
struct MemoryBands {
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
    std::int64_t activations_bytes = 0;
    std::int64_t optimizer_step_bytes = 0; // what the optimizer step needed above the activations
};
MemoryBands memory_bands(const RunResult& run);

// "12.3 MiB" style formatting shared by the lab and the runs list.
QString format_bytes(std::int64_t bytes);

// A run's gradient all-reduces per optimizer step (the mean over its step
// records; 0 for one process), and its training time per update in seconds.
double allreduces_per_update(const RunResult& run);
double seconds_per_update(const RunResult& run);
// A run's speed a teacher can repeat: the time of each update after
// the first kLabWarmupUpdates (first allocations, kernel set-up, a first run's
// cold process), their median and quartiles, and the samples/s of those updates.
// `updates` counts the timed updates; below kLabMinTimedUpdates the figures are NaN
// (too few to say a speed).
inline constexpr int kLabWarmupUpdates = 2;
inline constexpr int kLabMinTimedUpdates = 3;
struct UpdateTiming {
    int updates = 0;
    double seconds = 0, seconds_low = 0, seconds_high = 0;              // per update: median, quartiles
    double samples_per_second = 0, samples_low = 0, samples_high = 0;  // median, quartiles
};
UpdateTiming update_timing(const RunResult& run);
// `value` rounded to what its spread [low, high] allows: to the power of ten of
// the spread's half-width ("19400" for 19,437 within 19,100–19,800; "63.6" for
// 63.62 within 63.2–64.1); NaN gives "–".
QString rounded_to_spread(double value, double low, double high);
// "63.6 (63.2–64.1)": the value so rounded and its spread at the same precision.
QString with_spread(double value, double low, double high);

// The updates the run skipped (the loss scaler's overflows, --skip-nonfinite).
std::int64_t skipped_updates(const RunResult& run);

} // namespace studio
