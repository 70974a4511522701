#pragma once
// Suggests micro-batch × K for a target effective batch under a memory budget,
// weighing both memory levers: a smaller micro-batch with more accumulation
// steps, and gradient checkpointing. For each lever it probes the model's
// activations (the estimate of accum/run_estimate.h: peak ≈ fixed + per_sample
// × B), takes the largest micro-batch predicted to fit, and checks it with a
// short real run under the budget that also measures its samples/s; the pick is
// the faster of the two that fit. A prediction from measurement, not a loop of
// crashes.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "accum/records.h"
#include "accum/run_config.h"

namespace accum {

struct PlanMeasurement {
    std::int64_t batch_size = 0;
    std::int64_t peak_bytes = 0;         // predicted from the probe: static + activations at this micro-batch
};

// One lever's best candidate: the largest micro-batch predicted to fit, as verified.
struct PlanCandidate {
    bool gradient_checkpointing = false;
    double fixed_bytes = 0;              // fitted: parameters, gradients, optimizer state and the fixed activations
    double bytes_per_sample = 0;         // fitted: activations per sample
    std::int64_t batch_size = 0;         // 0: nothing predicted to fit
    std::int64_t accumulation_steps = 0;
    double predicted_peak_bytes = 0;
    bool verified = false;               // a short run under the budget completed
    std::int64_t verified_peak_bytes = 0;
    // The speed: the median of the updates' samples/s and their quartiles, over
    // the verification run and the timing rounds, warm-up left out (below).
    double samples_per_second = 0;
    double samples_per_second_low = 0;   // first quartile
    double samples_per_second_high = 0;  // third quartile
    int timed_steps = 0;                 // updates timed (after the warm-up)
    double others_share = 0;             // the share of the machine other processes took during the verification run
    std::string note;                    // why this lever has no verified candidate, if so
};

struct MemoryPlan {
    bool feasible = false;
    std::int64_t target_batch = 0;
    std::int64_t budget_bytes = 0;
    double safety_margin = 0.10;         // the pick's predicted peak stays under (1 - margin) × budget
    std::vector<PlanMeasurement> measurements; // the pick's lever: predicted peak at the probed micro-batches
    double fixed_bytes = 0;              // the pick's lever, fitted
    double bytes_per_sample = 0;
    std::vector<PlanCandidate> candidates; // without checkpointing, then with it (when weighed)
    std::int64_t batch_size = 0;         // the pick
    std::int64_t accumulation_steps = 0;
    bool gradient_checkpointing = false;
    std::int64_t effective_batch = 0;
    bool exact = false;                  // batch_size × K == target_batch
    double predicted_peak_bytes = 0;
    double process_bytes = 0;            // the whole process at the pick, checkpoints included (run_estimate.h)
    // The pick's parameters, gradients and optimizer state, and of them the frozen
    // weights (requires_grad false: a LoRA module's base), which take no gradient
    // and no optimizer state: with LoRA nearly all accumulation can shrink is the
    // activations (bytes_per_sample), and the frozen weights stay whatever B × K.
    std::int64_t static_bytes = 0;
    std::int64_t frozen_parameters_bytes = 0;
    bool verified = false;               // one short run under the budget completed
    std::int64_t verified_peak_bytes = 0;
    bool nothing_fits = false;           // measured: not even micro-batch 1 fits the budget, with either lever
    // Why the pick, against the other lever, as a code (engine_messages.h:
    // plan_faster, plan_checkpointing_no_larger, plan_only_checkpointing): "B × K
    // fits without checkpointing and runs r × faster than B' × K' with it".
    EngineMessage why;
    // With plan_faster: the pick's median samples/s over the other's, and its
    // spread: the range of the timing rounds' ratios (below), widened to the pick's
    // quartiles over the other's (low: first over third, high: third over first);
    // why's "ratio" is
    // `ratio` rounded to what the range allows and its "spread" the range ("1.07"
    // and "1.04–1.10").
    double ratio = 0;
    double ratio_low = 0;
    double ratio_high = 0;
    // The largest share of the machine other processes took in a timing round the
    // ratio counts (above kDisturbedShare only when no round ran undisturbed).
    double timing_others_share = 0;
    std::string message;
    EngineMessage reason;                // when nothing fits: `message` as a code (engine_messages.h)
};

// `progress` (may be empty) is told what is being measured. `cancelled` (may be
// empty) is asked before each probe and run; when it returns true the plan stops
// there, unfinished (message "cancelled"). Both levers are weighed whatever
// the base config's --gradient-checkpointing.
MemoryPlan plan_memory(const RunConfig& base, std::int64_t target_batch, std::int64_t budget_bytes,
                       const std::function<void(const std::string&)>& progress = {},
                       const std::function<bool()>& cancelled = {});

std::string to_json_text(const MemoryPlan& plan);

// How the levers' speeds are measured. Each lever's verification run leaves
// out its first kVerifyWarmupSteps updates (first allocations, kernel set-up);
// when both levers fit, kTimingRounds more rounds run each again, alternately, in
// the warm process, leaving out kTimingWarmupSteps. A run times at least
// kMinTimedSteps updates and kMinTimedSeconds, at most kMaxTimedSeconds (a slow
// model stops earlier, with no fewer than 3 timed updates); a round starts only
// while the rounds so far took less than kTimingBudgetSeconds (a busy machine
// gets one round: the planner runs in front of a class). A round in which other
// processes took more than kDisturbedShare of all CPUs' time does not count and
// is run again, up to kTimingAttempts rounds in all, while the budget allows; the
// disturbed rounds count only when none ran undisturbed. Each round gives one
// ratio of the two levers' median samples/s; the plan states the ratio of the
// levers' medians over every timed update, within the range of the rounds' ratios
// and of their updates' quartiles.
inline constexpr int kVerifyWarmupSteps = 2;
inline constexpr int kTimingWarmupSteps = 1;
inline constexpr int kTimingRounds = 2;
inline constexpr int kTimingAttempts = 5;
inline constexpr double kDisturbedShare = 0.15;
inline constexpr double kTimingBudgetSeconds = 8.0;
inline constexpr int kMinTimedSteps = 4;
inline constexpr double kMinTimedSeconds = 0.2;
inline constexpr double kMaxTimedSeconds = 1.0;

// A ratio rounded to what its spread [low, high] allows: the last digit is the
// one the spread's half-width first reaches (at most two decimals): 3.52 with
// 3.3–3.8 gives "3.5", 1.071 with 1.06–1.08 "1.07", 3.5 with 2.2–4.9 "4".
std::string ratio_text(double ratio, double low, double high);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
