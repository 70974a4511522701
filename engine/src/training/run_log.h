#pragma once
// What the loop has done (Progress), and how a style's log lines read (RunLog):
// the plain loop's lines by default, the Trainer's dicts in its style. A log
// turns records into lines; the run writes them. Torch-free.

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "accum/records.h"

namespace accum {

// What the loop has done so far; enough to resume at a window boundary.
struct Progress {
    std::int64_t epoch = 0;           // current epoch (0-based)
    std::int64_t next_index = 0;      // next micro-batch index in that epoch
    std::int64_t global_step = 0;     // optimizer steps
    std::int64_t micro_steps = 0;
    std::int64_t samples_seen = 0;
    double elapsed_before_s = 0.0;    // training time of earlier (resumed) sessions
    double last_loss = std::nan("");
    // The counters as they were after the last optimizer step (what a checkpoint records).
    std::int64_t micro_steps_at_step = 0;
    std::int64_t samples_at_step = 0;
};

// Where the run stands when a step record is made, for a log's cadence.
struct StepPosition {
    std::int64_t total_updates = 0; // the run's optimizer steps
    bool last = false;              // this is the run's last step
};

class RunLog {
public:
    virtual ~RunLog() = default;
    // After every optimizer step: the line to write, if the log writes one now.
    virtual std::optional<std::string> on_step(const StepRecord& step, const StepPosition& position) = 0;
    // After every evaluation.
    virtual std::optional<std::string> on_eval(const EvalRecord& eval) = 0;
    // What a checkpoint keeps of the log (trainer_state.json), and restoring it.
    virtual nlohmann::json state() const { return nlohmann::json::object(); }
    virtual void restore(const nlohmann::json& /*state*/) {}
};

// The plain loop's lines: one every `logging_steps` optimizer steps and at the
// last step, with the samples/s since the previous line.
std::unique_ptr<RunLog> make_plain_log(std::int64_t logging_steps);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
