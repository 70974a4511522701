#pragma once
// A dynamic loss scaler with the semantics and defaults of PyTorch's
// torch.amp.GradScaler (torch/amp/grad_scaler.py), which LibTorch's C++ API
// does not have.
//
//   scale(loss)        loss × S, so that small fp16 gradients do not underflow
//   unscale_(opt)      divides opt's gradients by S in place and records whether
//                      any is inf or NaN; at most once between two update()s
//   step(opt)          unscale_ if not done yet, then opt.step() only when every
//                      gradient was finite; returns whether it stepped
//   update()           S × backoff_factor after an overflow (the growth tracker
//                      back to 0), else one more good step, and S × growth_factor
//                      after growth_interval good steps in a row
//
// Per optimizer the scaler is READY, UNSCALED (after unscale_) or STEPPED
// (after step), until update() makes every optimizer READY again.
//
// Under gradient accumulation with K micro-batches per window:
//
//   for each micro-batch:
//       { AutocastScope autocast(device, precision); out = model->forward(batch); }
//       scaler.scale(out.loss / K).backward();   // S is constant inside a window
//       if (sync) {
//           scaler.unscale_(optimizer);          // once, on the sync micro-batch
//           clip_grad_norm_(params, max_norm);   // clips the unscaled gradients
//           if (scaler.step(optimizer)) scheduler.step();  // skipped window: no scheduler step
//           scaler.update();                     // once per window
//           optimizer.zero_grad();
//       }
//
// Gradients are whatever dtype the parameters have (fp32 master weights here);
// fp16 gradients are refused, as PyTorch refuses to unscale them. Works on CPU
// and CUDA tensors: on CUDA it calls ATen's _amp_foreach_non_finite_check_and_unscale_
// and _amp_update_scale_ (their only kernels in LibTorch 1.13 are CUDA ones), on
// the CPU the same arithmetic with tensor operators and on the host.

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torch::optim {
class Optimizer;
}

namespace accum {

struct GradScalerOptions {
    double init_scale = 65536.0; // 2^16
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    std::int64_t growth_interval = 2000;
    bool enabled = true;
};

// What a checkpoint keeps: PyTorch's GradScaler.state_dict() ("scale",
// "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker").
struct GradScalerState {
    double scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    std::int64_t growth_interval = 2000;
    std::int64_t growth_tracker = 0; // good steps in a row since the scale last changed
};

class GradScaler {
public:
    enum class Stage { Ready, Unscaled, Stepped };

    // Throws ConfigError for growth_factor <= 1, backoff_factor outside (0, 1),
    // growth_interval < 1 or a scale that is not a finite positive number.
    explicit GradScaler(GradScalerOptions options = {});

    bool is_enabled() const { return enabled_; }

    // outputs × the current scale (the scale is made on the loss's device the
    // first time); the loss itself when disabled.
    at::Tensor scale(const at::Tensor& outputs);

    // Divides the gradients of the optimizer's parameters by the scale, in place,
    // and records whether any was inf or NaN. std::logic_error when called twice
    // before update(), after step(), or before scale(); std::invalid_argument for
    // an fp16 gradient. A no-op when disabled.
    void unscale_(torch::optim::Optimizer& optimizer);

    // unscale_ (unless done since the last update), then optimizer.step() unless
    // a gradient was inf or NaN. Returns whether the optimizer stepped (always
    // true when disabled). std::logic_error when called twice before update(),
    // or when no parameter of the optimizer has a gradient.
    bool step(torch::optim::Optimizer& optimizer);

    // Backs off or grows the scale from what unscale_ found for every optimizer
    // since the last update, and makes them all READY. std::logic_error when
    // nothing was unscaled since the last update. A no-op when disabled.
    void update();
    // Sets the scale to `new_scale` instead (the growth tracker is kept, as in PyTorch).
    void update(double new_scale);

    // The current scale (init_scale before the first scale()); 1 when disabled.
    double get_scale() const;
    std::int64_t growth_tracker() const;
    double growth_factor() const { return growth_factor_; }
    double backoff_factor() const { return backoff_factor_; }
    std::int64_t growth_interval() const { return growth_interval_; }
    Stage stage(const torch::optim::Optimizer& optimizer) const;

    // nullopt when disabled (PyTorch's empty dict). Call it after update().
    std::optional<GradScalerState> state_dict() const;
    // Restores a state_dict(); a no-op when disabled. Throws DataError (naming the
    // field) for a state no scaler could have.
    void load_state_dict(const GradScalerState& state);

private:
    struct OptimizerState {
        Stage stage = Stage::Ready;
        std::vector<at::Tensor> found_inf_per_device; // 0-dim float32, > 0 when a gradient was inf/NaN
    };

    void require_scale(const char* function) const;
    void unscale_grads(torch::optim::Optimizer& optimizer, OptimizerState& state);

    bool enabled_;
    double init_scale_;
    double growth_factor_, backoff_factor_;
    std::int64_t growth_interval_;
    std::int64_t init_growth_tracker_ = 0;
    at::Tensor scale_;          // 0-dim float32 on the device of the first scaled loss
    at::Tensor growth_tracker_; // 0-dim int32, beside it
    std::unordered_map<const torch::optim::Optimizer*, OptimizerState> per_optimizer_;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
