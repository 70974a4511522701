// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/data_parallel.h"

#include <torch/csrc/autograd/engine.h>

namespace accum::dist {

namespace {
thread_local DistributedState* t_default_state = nullptr;
} // namespace

void DistributedState::synchronize(const std::vector<torch::Tensor>& parameters, const MicroBatchPart& current) {
    std::vector<float> extras = passenger_ ? passenger_->board(current) : std::vector<float>{};
    sync_.average_gradients_of(parameters, extras);
    if (passenger_) passenger_->alight(extras);
}

DistributedState* default_state() { return t_default_state; }

DefaultStateScope::DefaultStateScope(DistributedState* state) : previous_(t_default_state) { t_default_state = state; }
DefaultStateScope::~DefaultStateScope() { t_default_state = previous_; }

DistributedDataParallel::DistributedDataParallel(Model& m) : module(m), state_(default_state()) {
    if (state_ && state_->world_size() < 2) state_ = nullptr;
}

ModelOutput DistributedDataParallel::operator()(const Batch& batch) {
    ModelOutput outputs = module(batch);
    if (!state_ || !require_backward_grad_sync || !torch::GradMode::is_enabled() ||
        !outputs.first_in_backward().requires_grad())
        return outputs;
    // Every loss the loops take (the mean, the token sum, either scaled) comes
    // from the logits (or a module's own loss): the first gradient to reach them
    // starts the backward this forward will sync. The sync is queued to run once
    // the whole backward is done, as DDP's reducer queues its finalisation: by
    // then every gradient is written, also those the fused MLP kernel adds
    // straight into .grad without autograd's AccumulateGrad.
    MicroBatchPart part{outputs.loss.detach(), outputs.loss_sum.detach(), batch.num_items};
    auto queued = std::make_shared<bool>(false);
    outputs.first_in_backward().register_hook([state = state_, params = module.trainable_parameters(),
                                               part = std::move(part), queued](const torch::Tensor&) {
        if (*queued) return;
        *queued = true;
        torch::autograd::Engine::get_default_engine().queue_callback(
            [state, params, part] { state->synchronize(params, part); });
    });
    return outputs;
}

} // namespace accum::dist
