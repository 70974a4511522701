#include "training/lr_scheduler.h"

#include <algorithm>
#include <cmath>

#include <torch/optim/optimizer.h>

namespace accum {

LrScheduler::LrScheduler(torch::optim::Optimizer& optimizer, SchedulerKind kind, std::int64_t warmup_steps,
                         std::int64_t total_steps)
    : optimizer_(optimizer), kind_(kind), warmup_(warmup_steps), total_steps_(total_steps) {
    for (auto& group : optimizer_.param_groups()) base_lrs_.push_back(group.options().get_lr());
    apply();
}

double LrScheduler::factor(std::int64_t s) const {
    if (s < warmup_) return static_cast<double>(s) / static_cast<double>(std::max<std::int64_t>(1, warmup_));
    if (kind_ == SchedulerKind::Constant) return 1.0;
    const double span = static_cast<double>(std::max<std::int64_t>(1, total_steps_ - warmup_));
    const double progress = static_cast<double>(s - warmup_) / span;
    if (kind_ == SchedulerKind::Linear) return std::max(0.0, 1.0 - progress);
    // cosine, half a cycle
    return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * progress)));
}

void LrScheduler::apply() {
    const double f = factor(step_count_);
    auto& groups = optimizer_.param_groups();
    for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(base_lrs_[i] * f);
}

void LrScheduler::step() {
    ++step_count_;
    apply();
}

void LrScheduler::set_step_count(std::int64_t s) {
    step_count_ = s;
    apply();
}

double LrScheduler::current_lr() const {
    const auto& groups = optimizer_.param_groups();
    return groups.empty() ? 0.0 : groups.front().options().get_lr();
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
