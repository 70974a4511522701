#include "training/grad_scaler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "accum/errors.h"
#include "torch_compat.h"

namespace accum {

namespace {

// Why these settings cannot make a scaler ("" if they can). PyTorch asserts
// the factors; a scale of 0, inf or NaN would make every step a skip or a NaN.
std::string settings_error(double scale, double growth_factor, double backoff_factor, std::int64_t growth_interval) {
    if (!std::isfinite(scale) || scale <= 0) return "the loss scale must be a finite number > 0, not " + std::to_string(scale);
    if (!std::isfinite(growth_factor) || growth_factor <= 1.0)
        return "the scale's growth factor must be > 1, not " + std::to_string(growth_factor);
    if (!(backoff_factor > 0.0 && backoff_factor < 1.0))
        return "the scale's backoff factor must be in (0, 1), not " + std::to_string(backoff_factor);
    if (growth_interval < 1) return "the scale's growth interval must be >= 1 step, not " + std::to_string(growth_interval);
    return {};
}

// The gradients of one device, split by dtype (one foreach call per dtype, as PyTorch does).
struct DeviceGrads {
    at::Device device;
    std::vector<std::pair<at::ScalarType, std::vector<at::Tensor>>> by_dtype;
};

} // namespace

GradScaler::GradScaler(GradScalerOptions options)
    : enabled_(options.enabled), init_scale_(options.init_scale), growth_factor_(options.growth_factor),
      backoff_factor_(options.backoff_factor), growth_interval_(options.growth_interval) {
    if (!enabled_) return;
    if (auto error = settings_error(init_scale_, growth_factor_, backoff_factor_, growth_interval_); !error.empty())
        throw ConfigError("--loss-scaling: " + error);
}

at::Tensor GradScaler::scale(const at::Tensor& outputs) {
    if (!enabled_) return outputs;
    if (!scale_.defined()) {
        scale_ = at::full(at::IntArrayRef{}, init_scale_, at::TensorOptions().dtype(at::kFloat).device(outputs.device()));
        growth_tracker_ = at::full(at::IntArrayRef{}, init_growth_tracker_, at::TensorOptions().dtype(at::kInt).device(outputs.device()));
    }
    return outputs * scale_.to(outputs.device(), at::kFloat, /*non_blocking=*/true);
}

void GradScaler::require_scale(const char* function) const {
    if (!scale_.defined())
        throw std::logic_error(std::string("GradScaler::") + function +
                               " before any scale(loss): the scale is made by the first scale() of the iteration");
}

void GradScaler::unscale_grads(torch::optim::Optimizer& optimizer, OptimizerState& state) {
    // The reciprocal in fp64, then fp32, as PyTorch does (fp32 division can be
    // imprecise under some compile options).
    const auto inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
    at::NoGradGuard no_grad;
    std::vector<DeviceGrads> grads;
    for (auto& group : optimizer.param_groups())
        for (auto& param : group.params()) {
            const auto& grad = param.grad();
            if (!grad.defined()) continue;
            if (grad.scalar_type() == at::kHalf) throw std::invalid_argument("Attempting to unscale FP16 gradients.");
            const auto to_unscale = grad.is_sparse() ? grad._values() : grad;
            auto device = std::find_if(grads.begin(), grads.end(),
                                       [&](const DeviceGrads& d) { return d.device == to_unscale.device(); });
            if (device == grads.end()) device = grads.insert(grads.end(), DeviceGrads{to_unscale.device(), {}});
            auto dtype = std::find_if(device->by_dtype.begin(), device->by_dtype.end(),
                                      [&](const auto& d) { return d.first == to_unscale.scalar_type(); });
            if (dtype == device->by_dtype.end())
                dtype = device->by_dtype.emplace(device->by_dtype.end(), to_unscale.scalar_type(), std::vector<at::Tensor>{});
            dtype->second.push_back(to_unscale);
        }
    state.found_inf_per_device.clear();
    for (auto& device : grads) {
        auto found_inf = at::zeros(at::IntArrayRef{}, at::TensorOptions().dtype(at::kFloat).device(device.device));
        const auto inv = inv_scale.to(device.device, at::kFloat, /*non_blocking=*/true);
        for (auto& [dtype, tensors] : device.by_dtype) {
            if (device.device.is_cuda() || compat::kAmpOpsOnCpu) {
                at::_amp_foreach_non_finite_check_and_unscale_(tensors, found_inf, inv);
                continue;
            }
            // The same on the CPU before LibTorch 2.3 (no CPU kernel): check each
            // gradient as it came out of backward, then multiply it by 1/S.
            for (auto& g : tensors) {
                if (!at::isfinite(g).all().item<bool>()) found_inf.fill_(1.0);
                g.mul_(inv);
            }
        }
        state.found_inf_per_device.push_back(found_inf);
    }
}

void GradScaler::unscale_(torch::optim::Optimizer& optimizer) {
    if (!enabled_) return;
    require_scale("unscale_");
    auto& state = per_optimizer_[&optimizer];
    if (state.stage == Stage::Unscaled)
        throw std::logic_error("unscale_() has already been called on this optimizer since the last update().");
    if (state.stage == Stage::Stepped) throw std::logic_error("unscale_() is being called after step().");
    unscale_grads(optimizer, state);
    state.stage = Stage::Unscaled;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
    if (!enabled_) {
        optimizer.step();
        return true;
    }
    require_scale("step");
    if (per_optimizer_[&optimizer].stage == Stage::Stepped)
        throw std::logic_error("step() has already been called since the last update().");
    if (per_optimizer_[&optimizer].stage == Stage::Ready) unscale_(optimizer);
    auto& state = per_optimizer_[&optimizer];
    if (state.found_inf_per_device.empty())
        throw std::logic_error("No inf checks were recorded for this optimizer (no parameter has a gradient).");
    bool found_inf = false;
    for (const auto& f : state.found_inf_per_device) found_inf = found_inf || f.item<float>() > 0.0f;
    if (!found_inf) optimizer.step();
    state.stage = Stage::Stepped;
    return !found_inf;
}

void GradScaler::update() {
    if (!enabled_) return;
    require_scale("update");
    at::Tensor found_inf;
    for (const auto& [optimizer, state] : per_optimizer_)
        for (const auto& f : state.found_inf_per_device) {
            const auto here = f.to(scale_.device(), at::kFloat, /*non_blocking=*/true);
            found_inf = found_inf.defined() ? found_inf + here : here;
        }
    if (!found_inf.defined()) throw std::logic_error("No inf checks were recorded prior to update().");
    if (scale_.is_cuda() || compat::kAmpOpsOnCpu) {
        at::_amp_update_scale_(scale_, growth_tracker_, found_inf, growth_factor_, backoff_factor_, growth_interval_);
    } else {
        // _amp_update_scale_'s arithmetic (no CPU kernel before 2.3): the scale is a float32, multiplied in
        // double and rounded; it does not grow past float32's range to inf.
        auto scale = scale_.item<float>();
        std::int64_t tracker = growth_tracker_.item<int>();
        if (found_inf.item<float>() > 0.0f) {
            scale = static_cast<float>(scale * backoff_factor_);
            tracker = 0;
        } else if (tracker + 1 == growth_interval_) {
            const auto grown = static_cast<float>(scale * growth_factor_);
            if (std::isfinite(grown)) scale = grown;
            tracker = 0;
        } else {
            tracker += 1;
        }
        scale_.fill_(scale);
        growth_tracker_.fill_(tracker);
    }
    per_optimizer_.clear();
}

void GradScaler::update(double new_scale) {
    if (!enabled_) return;
    require_scale("update");
    if (!std::isfinite(new_scale) || new_scale <= 0)
        throw std::invalid_argument("GradScaler::update: the new scale must be a finite number > 0, not " +
                                    std::to_string(new_scale));
    scale_.fill_(new_scale);
    per_optimizer_.clear();
}

double GradScaler::get_scale() const {
    if (!enabled_) return 1.0;
    return scale_.defined() ? static_cast<double>(scale_.item<float>()) : init_scale_;
}

std::int64_t GradScaler::growth_tracker() const {
    if (!enabled_) return 0;
    return growth_tracker_.defined() ? growth_tracker_.item<int>() : init_growth_tracker_;
}

GradScaler::Stage GradScaler::stage(const torch::optim::Optimizer& optimizer) const {
    const auto it = per_optimizer_.find(&optimizer);
    return it == per_optimizer_.end() ? Stage::Ready : it->second.stage;
}

std::optional<GradScalerState> GradScaler::state_dict() const {
    if (!enabled_) return std::nullopt;
    return GradScalerState{get_scale(), growth_factor_, backoff_factor_, growth_interval_, growth_tracker()};
}

void GradScaler::load_state_dict(const GradScalerState& state) {
    if (!enabled_) return;
    if (auto error = settings_error(state.scale, state.growth_factor, state.backoff_factor, state.growth_interval);
        !error.empty())
        throw DataError("loss scaler state: " + error);
    if (state.growth_tracker < 0 || state.growth_tracker >= state.growth_interval)
        throw DataError("loss scaler state: the growth tracker must be in [0, growth interval), not " +
                        std::to_string(state.growth_tracker));
    init_scale_ = state.scale;
    growth_factor_ = state.growth_factor;
    backoff_factor_ = state.backoff_factor;
    growth_interval_ = state.growth_interval;
    init_growth_tracker_ = state.growth_tracker;
    if (scale_.defined()) scale_.fill_(state.scale);
    if (growth_tracker_.defined()) growth_tracker_.fill_(state.growth_tracker);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
