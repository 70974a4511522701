#include "training/optimizer.h"

#include "kernels/fused_dense.h"
#include "training/hf_export.h"

#include <algorithm>

#include <torch/nn/modules/normalization.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

namespace accum {

namespace {

// The scale as its float32 tensor holds it: get_scale() answers with the
// configured double until the first scale() makes the tensor.
double as_float32(double scale) { return static_cast<double>(static_cast<float>(scale)); }

// The optimizer's parameter groups (see make_optimizer), over the trainable
// parameters only (Trainer.create_optimizer skips those without requires_grad).
// Without weight decay the Trainer's two groups would not differ: one group then.
std::vector<torch::optim::OptimizerParamGroup> parameter_groups(const RunConfig& config, Model& model,
                                                                const torch::optim::OptimizerOptions& options) {
    std::vector<torch::optim::OptimizerParamGroup> out;
    if (config.mode != Mode::Trainer || config.weight_decay == 0.0) {
        out.emplace_back(model.trainable_parameters(), options.clone());
        return out;
    }
    // Trainer.get_decay_parameter_names: by name, and LayerNorm's (a mirrored
    // TorchScript module's by its parameters' shapes).
    const auto no_decay_flags = trainer_no_decay_flags(model);
    std::vector<torch::Tensor> decay, no_decay;
    std::size_t i = 0;
    for (const auto& item : model.named_parameters()) {
        const bool no = no_decay_flags.at(i++);
        if (item.value().requires_grad()) (no ? no_decay : decay).push_back(item.value());
    }
    out.emplace_back(decay, options.clone());
    auto without = options.clone();
    if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(without.get())) adamw->weight_decay(0.0);
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(without.get())) sgd->weight_decay(0.0);
    out.emplace_back(no_decay, std::move(without));
    return out;
}

// The optimizer over its groups, each with the options it was given. LibTorch
// 2.15's constructor merges a group's options with the optimizer's defaults and
// takes any value equal to the options' own default (weight_decay 0, the
// no-decay group's) from the optimizer's: every group would decay. Setting the
// groups' options again after construction keeps them, on every version.
template <typename Torch, typename Options>
std::unique_ptr<Optimizer> make(const RunConfig& config, Model& model, const Options& options) {
    auto groups = parameter_groups(config, model, options);
    std::vector<std::unique_ptr<torch::optim::OptimizerOptions>> wanted;
    for (auto& group : groups) wanted.push_back(group.options().clone());
    auto impl = std::make_unique<Torch>(std::move(groups), options);
    for (std::size_t i = 0; i < wanted.size(); ++i) impl->param_groups()[i].set_options(std::move(wanted[i]));
    return std::make_unique<Optimizer>(std::move(impl));
}

} // namespace

std::unique_ptr<Optimizer> make_optimizer(const RunConfig& config, Model& model) {
    switch (config.optimizer) {
    case OptimizerKind::AdamW:
        return make<torch::optim::AdamW>(
            config, model, torch::optim::AdamWOptions(config.learning_rate).weight_decay(config.weight_decay));
    case OptimizerKind::Sgd:
        return make<torch::optim::SGD>(
            config, model,
            torch::optim::SGDOptions(config.learning_rate).momentum(config.momentum).weight_decay(config.weight_decay));
    }
    throw std::invalid_argument("make_optimizer: an optimizer kind it does not know");
}

void Optimizer::zero_grad() {
    for (auto& group : impl_->param_groups())
        for (auto& p : group.params())
            if (p.grad().defined()) p.mutable_grad().reset();
}

LossScaler::LossScaler(GradScalerOptions options)
    : impl_(options), scale_(as_float32(impl_.get_scale())), window_scale_(scale_) {}

void LossScaler::unscale_(Optimizer& optimizer) {
    impl_.unscale_(optimizer.impl());
    if (impl_.is_enabled()) ++unscales_;
}

bool LossScaler::step(Optimizer& optimizer) {
    const bool unscales = impl_.is_enabled() && impl_.stage(optimizer.impl()) == GradScaler::Stage::Ready;
    const bool stepped = impl_.step(optimizer.impl());
    if (stepped) dense_weights_changed(); // the bf16 dense stack's weight copies are stale
    if (unscales) ++unscales_;
    skipped_ = !stepped;
    return stepped;
}

void LossScaler::update() {
    window_scale_ = scale_;
    window_skipped_ = skipped_;
    skipped_ = false;
    impl_.update();
    scale_ = impl_.get_scale();
}

void LossScaler::load_state_dict(const GradScalerState& state) {
    impl_.load_state_dict(state);
    scale_ = as_float32(impl_.get_scale());
}

std::unique_ptr<LossScaler> make_loss_scaler(const RunConfig& config) {
    GradScalerOptions scaling;
    scaling.init_scale = config.loss_scale_init;
    scaling.enabled = config.uses_loss_scaler();
    return std::make_unique<LossScaler>(scaling);
}

double clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm) {
    if (max_norm > 0) return torch::nn::utils::clip_grad_norm_(parameters, max_norm);
    std::vector<torch::Tensor> norms;
    for (const auto& p : parameters)
        if (p.grad().defined()) norms.push_back(p.grad().norm(2));
    if (norms.empty()) return 0.0;
    return torch::stack(norms).norm(2).item<double>();
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
