#pragma once
// Suggests micro-batch × K for a target effective batch under a memory budget,
// by measuring peak tensor memory at a few micro-batch sizes, fitting the
// growth (peak ≈ fixed + per_sample × B), and checking the pick with one real
// optimizer step under the budget. A prediction from measurement, not a loop of
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
    std::int64_t peak_bytes = 0;
};

struct MemoryPlan {
    bool feasible = false;
    std::int64_t target_batch = 0;
    std::int64_t budget_bytes = 0;
    double safety_margin = 0.10;         // the pick's predicted peak stays under (1 - margin) × budget
    std::vector<PlanMeasurement> measurements;
    double fixed_bytes = 0;              // fitted: parameters, gradients, optimizer state
    double bytes_per_sample = 0;         // fitted: activations per sample
    std::int64_t batch_size = 0;         // the pick
    std::int64_t accumulation_steps = 0;
    std::int64_t effective_batch = 0;
    bool exact = false;                  // batch_size × K == target_batch
    double predicted_peak_bytes = 0;
    bool verified = false;               // one real step under the budget completed
    std::int64_t verified_peak_bytes = 0;
    bool nothing_fits = false;           // measured: not even micro-batch 1 fits the budget
    std::string message;
    EngineMessage reason;                // when nothing fits: `message` as a code (engine_messages.h)
};

// `progress` (may be empty) is told what is being measured. `cancelled` (may be
// empty) is asked before each probe run; when it returns true the plan stops
// there, unfinished (message "cancelled").
MemoryPlan plan_memory(const RunConfig& base, std::int64_t target_batch, std::int64_t budget_bytes,
                       const std::function<void(const std::string&)>& progress = {},
                       const std::function<bool()>& cancelled = {});

// Whether this thread is inside plan_memory: its probe runs, which may run out
// of memory on purpose, do not plan again.
bool measuring_memory();

std::string to_json_text(const MemoryPlan& plan);

} // namespace accum
