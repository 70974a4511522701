#include "training/noise_scale.h"

#include "kernels/dense_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace accum {

NoiseEstimate unbiased_noise_estimate(double small_sq, double batch_small, double big_sq, double batch_big) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(small_sq) || !std::isfinite(big_sq) || !(batch_small > 0) || !(batch_big > batch_small))
        return {nan, nan};
    return {(batch_big * big_sq - batch_small * small_sq) / (batch_big - batch_small),
            (small_sq - big_sq) / (1.0 / batch_small - 1.0 / batch_big)};
}

void NoiseScale::add(const NoiseEstimate& e) {
    if (!std::isfinite(e.gradient_sq) || !std::isfinite(e.trace)) return;
    if (!started_) {
        gradient_sq_ = e.gradient_sq;
        trace_ = e.trace;
        started_ = true;
        return;
    }
    gradient_sq_ = kDecay * gradient_sq_ + (1.0 - kDecay) * e.gradient_sq;
    trace_ = kDecay * trace_ + (1.0 - kDecay) * e.trace;
}

double NoiseScale::value() const {
    if (!started_ || !(gradient_sq_ > 0) || !(trace_ > 0)) return std::numeric_limits<double>::quiet_NaN();
    return trace_ / gradient_sq_;
}

NoiseScaleMeter::NoiseScaleMeter(const RunConfig& config, int world_size, bool measures)
    : config_(config), world_size_(world_size), measures_(measures) {
    // The first backward's gradient norms come from the fused backward's notes
    // where it writes them; K = 1 measures nothing.
    if (measures_ && config_.accumulation_steps > 1) arm_gradient_notes(true);
}

NoiseScaleMeter::~NoiseScaleMeter() {
    if (measures_) arm_gradient_notes(false);
}

void NoiseScaleMeter::after_backward(const std::vector<torch::Tensor>& parameters, const Batch& batch,
                                     std::int64_t index, const DataLoader& loader, double loss_scale, bool sync) {
    const std::int64_t k = config_.accumulation_steps;
    const std::int64_t first = index - index % k;
    if (index != first) {
        window_samples_ += batch.size;
        return;
    }
    window_samples_ = batch.size;
    small_sq_ = SquaredNorm();
    if (!measures_) return;
    measure_first(parameters, batch, index, first, loader, loss_scale, sync);
    arm_gradient_notes(false); // the window's other backward passes need no notes
}

void NoiseScaleMeter::measure_first(const std::vector<torch::Tensor>& parameters, const Batch& batch,
                                    std::int64_t index, std::int64_t first, const DataLoader& loader,
                                    double loss_scale, bool sync) {
    const std::int64_t k = config_.accumulation_steps;
    // Every style starts its windows at multiples of K in the epoch and flushes
    // the last, r ≤ K micro-batches long.
    const std::int64_t r = std::min(first + k, loader.size()) - first;
    // The first micro-batch's .grad is S·w·g₁ (g₁ the mean over its own samples
    // or tokens, w its loss weight), averaged over the ranks when it is synced.
    const bool reduced = world_size_ > 1 && (sync || config_.sync_each_micro_batch);
    double weight = 0.0;
    if (config_.loss_normalization == LossNormalization::Tokens) {
        // loss_sum · world / N: N the label tokens of the whole window, every rank's.
        window_tokens_ = static_cast<double>(loader.items_in(first, first + r));
        batch_small_ = static_cast<double>(reduced ? loader.items_in(index, index + 1) : batch.num_items);
        weight = (reduced ? 1.0 : world_size_) * batch_small_ / window_tokens_;
        big_factor_ = 1.0;
        if (!(batch_small_ < window_tokens_)) return;
    } else {
        // The mean loss divided by K (PyTorch, Accelerate) or by the window's r (the Trainer).
        const double divisor = static_cast<double>(config_.mode == Mode::Trainer ? r : k);
        batch_small_ = static_cast<double>(batch.size * (reduced ? world_size_ : 1));
        weight = 1.0 / divisor;
        big_factor_ = divisor / static_cast<double>(r);
        if (!(batch_small_ < static_cast<double>(batch.size * r * world_size_))) return;
    }
    if (!(weight > 0) || !(loss_scale > 0)) return;
    small_factor_ = 1.0 / (loss_scale * weight);
    small_sq_ = squared_grad_norm(parameters);
}

void NoiseScaleMeter::window_done(double grad_norm, StepRecord& r) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    if (!measures_) return;
    const bool tokens = config_.loss_normalization == LossNormalization::Tokens;
    r.batch_big = tokens ? window_tokens_ : static_cast<double>(window_samples_ * world_size_);
    r.grad_norm_sq_big = std::isfinite(grad_norm) ? grad_norm * grad_norm * big_factor_ * big_factor_ : nan;
    if (small_sq_.any) {
        r.grad_norm_sq_small = small_sq_.value() * small_factor_ * small_factor_;
        r.batch_small = batch_small_;
        estimate_.add(unbiased_noise_estimate(r.grad_norm_sq_small, r.batch_small, r.grad_norm_sq_big, r.batch_big));
    }
    small_sq_ = SquaredNorm();
    if (config_.accumulation_steps > 1) arm_gradient_notes(true); // for the next window's first backward
    r.noise_scale = estimate_.value();
}

SquaredNorm squared_grad_norm(const std::vector<torch::Tensor>& parameters) {
    SquaredNorm out;
    std::vector<torch::Tensor> norms; // as clip_grad_norm_ measures: each gradient's norm, then theirs
    for (const auto& p : parameters) {
        const auto& g = p.grad();
        if (!g.defined()) continue;
        out.any = true;
        if (const double noted = noted_gradient_squares(p); noted >= 0.0)
            out.cpu += noted;
        else if (g.device().is_cpu() && g.scalar_type() == torch::kFloat && g.is_contiguous())
            out.cpu += dense::sum_of_squares(g.data_ptr<float>(), g.numel());
        else
            norms.push_back(g.detach().norm(2));
    }
    if (!norms.empty()) out.device = torch::stack(norms).norm(2).square();
    return out;
}

double SquaredNorm::value() const {
    return cpu + (device.defined() ? device.item<double>() : 0.0);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
