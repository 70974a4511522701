#pragma once
// Learning-rate schedules with linear warm-up, as Transformers' get_*_schedule_with_warmup:
//   constant: f(s) = s / warmup during warm-up, then 1
//   linear:   then (total - s) / (total - warmup), down to 0
//   cosine:   then 0.5 * (1 + cos(pi * progress)), down to 0
// Stepped once per optimizer step; `s` counts the steps already taken.

#include <cstdint>
#include <vector>

#include "accum/run_config.h"

namespace torch::optim {
class Optimizer;
}

namespace accum {

class LrScheduler {
public:
    LrScheduler(torch::optim::Optimizer& optimizer, SchedulerKind kind, std::int64_t warmup_steps,
                std::int64_t total_steps);

    void step();                     // scheduler.step(): advance one optimizer step
    double factor(std::int64_t s) const;
    double current_lr() const;       // the rate the next optimizer step uses
    std::int64_t step_count() const { return step_count_; }
    void set_step_count(std::int64_t s); // for resuming
    std::int64_t total_steps() const { return total_steps_; }

private:
    void apply();
    torch::optim::Optimizer& optimizer_;
    SchedulerKind kind_;
    std::int64_t warmup_, total_steps_, step_count_ = 0;
    std::vector<double> base_lrs_;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
