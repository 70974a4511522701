#pragma once
// The optimizer side of a run as the style loops call it: the optimizer (built
// from the config, with the Trainer's parameter groups), the loss scaler, and
// gradient clipping. Nothing here knows about records, logs or processes.

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "accum/run_config.h"
#include "models/model.h"
#include "training/grad_scaler.h"

namespace accum {

// The run's optimizer as the loops call it. zero_grad() is PyTorch 2's
// (set_to_none=True): each .grad is released, so the next backward stores its
// gradient instead of adding it to a tensor of zeros. LibTorch 1.13's
// Optimizer::zero_grad() still writes zeros.
class Optimizer {
public:
    explicit Optimizer(std::unique_ptr<torch::optim::Optimizer> impl) : impl_(std::move(impl)) {}
    void step() { impl_->step(); }
    void zero_grad();
    torch::optim::Optimizer& impl() { return *impl_; }
    const torch::optim::Optimizer& impl() const { return *impl_; }

private:
    std::unique_ptr<torch::optim::Optimizer> impl_;
};

// The configured optimizer (SGD with momentum, or AdamW) over the model's
// parameters. The Trainer decays the weights but not biases nor LayerNorm's
// parameters (Trainer.create_optimizer: two groups, the second with
// weight_decay 0.0); the plain loop and Accelerate hand model.parameters() to
// the optimizer, which decays them all.
std::unique_ptr<Optimizer> make_optimizer(const RunConfig& config, Model& model);

// The run's loss scaler as the loops call it, torch.amp.GradScaler's four calls
// on the run's Optimizer:
//
//   scaler.scale(loss).backward();   // every micro-batch: loss × S
//   scaler.unscale_(optimizer);      // on the sync micro-batch, before clipping
//   scaler.step(optimizer);          // steps unless a gradient is inf/NaN; returns whether it stepped
//   scaler.update();                 // once per window: S × ½ after an overflow, × 2 after 2000 good windows
//
// Off (no --loss-scaling dynamic, no fp16), every call passes through, as
// GradScaler(enabled=False): scale() returns the loss, step() steps. It keeps
// what the step record reports: the scale of the window and whether its update
// was skipped, as of the last update(). The scale changes only in update() (and
// load_state_dict()): it is read from its tensor there, once, not at every
// get_scale() (a device synchronisation on CUDA).
class LossScaler {
public:
    explicit LossScaler(GradScalerOptions options = {});
    bool is_enabled() const { return impl_.is_enabled(); }
    torch::Tensor scale(const torch::Tensor& loss) { return impl_.scale(loss); }
    void unscale_(Optimizer& optimizer);
    bool step(Optimizer& optimizer);
    void update();
    double get_scale() const { return scale_; }
    void load_state_dict(const GradScalerState& state);
    const GradScaler& impl() const { return impl_; }

    // How often the gradients were divided by S (unscale_, or step() doing it): once per window.
    std::int64_t unscale_count() const { return unscales_; }
    // The scale the last window ran with (before its update()), 1 when off, and
    // whether its step() found an inf/NaN gradient and skipped the optimizer.
    double window_scale() const { return window_scale_; }
    bool window_skipped() const { return window_skipped_; }

private:
    GradScaler impl_;
    double scale_;         // impl_'s scale, as of the last change
    std::int64_t unscales_ = 0;
    bool skipped_ = false; // step() skipped since the last update()
    double window_scale_ = 1.0;
    bool window_skipped_ = false;
};

// The configured scaler: GradScaler for --loss-scaling dynamic or fp16; otherwise one that passes every call through.
std::unique_ptr<LossScaler> make_loss_scaler(const RunConfig& config);

// torch.nn.utils.clip_grad_norm_: scales the gradients so that their joint norm
// is at most max_norm, and returns the norm before clipping. max_norm 0 measures
// the norm without clipping (the record of every step carries it).
double clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
