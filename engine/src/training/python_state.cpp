// SPDX-License-Identifier: GPL-3.0-or-later
#include "training/python_state.h"

#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "training/hf_export.h"

namespace accum {

namespace {

c10::impl::GenericDict string_dict() { return c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get()); }

// A list the pickler writes as a plain Python list (a c10::List<int64_t> or
// <double> becomes torch.jit._pickle.build_intlist(...), which weights_only refuses).
c10::impl::GenericList plain_list() { return c10::impl::GenericList(c10::AnyType::get()); }

// A parameter's state in LibTorch's optimizer, keyed by its TensorImpl: the
// pointer (LibTorch 2.x) or its text as a stream writes it (1.13).
template <class Map>
typename Map::key_type key_of(const Map&, const torch::Tensor& p) {
    using Key = typename Map::key_type;
    if constexpr (std::is_same_v<Key, std::string>) {
        std::ostringstream key;
        key << p.unsafeGetTensorImpl();
        return key.str();
    } else {
        return p.unsafeGetTensorImpl();
    }
}

template <class Map>
const torch::optim::OptimizerParamState* state_of(const Map& map, const torch::Tensor& p) {
    const auto found = map.find(key_of(map, p));
    return found == map.end() ? nullptr : found->second.get();
}

// The optimizer's parameters in Python's groups: the engine's groups, but in a
// Trainer run always the Trainer's two.
struct PythonGroup {
    std::vector<torch::Tensor> params;
    double weight_decay = 0;
};

std::vector<PythonGroup> python_groups(const CheckpointParts& parts, const RunConfig& config) {
    const auto& groups = parts.optimizer.impl().param_groups();
    auto decay_of = [](const torch::optim::OptimizerOptions& o) {
        if (const auto* a = dynamic_cast<const torch::optim::AdamWOptions*>(&o)) return a->weight_decay();
        if (const auto* s = dynamic_cast<const torch::optim::SGDOptions*>(&o)) return s->weight_decay();
        return 0.0;
    };
    std::vector<PythonGroup> out;
    if (config.mode == Mode::Trainer && groups.size() == 1) {
        const auto flags = trainer_no_decay_flags(parts.model);
        out.resize(2);
        out[0].weight_decay = decay_of(groups[0].options());
        std::size_t i = 0;
        for (const auto& p : parts.model.named_parameters()) // frozen ones in neither (requires_grad)
            if (const bool no = flags.at(i++); p.value().requires_grad()) out[no ? 1 : 0].params.push_back(p.value());
        return out;
    }
    for (const auto& g : groups) out.push_back({g.params(), decay_of(g.options())});
    return out;
}

} // namespace

c10::IValue python_optimizer_state(const CheckpointParts& parts, const RunConfig& config) {
    const auto groups = python_groups(parts, config);
    auto& impl = parts.optimizer.impl();
    const auto& engine_state = impl.state();
    c10::impl::GenericDict state(c10::IntType::get(), c10::AnyType::get());
    auto param_groups = plain_list();
    auto own = [](const torch::Tensor& t) { return t.detach(); }; // the optimizer's memory, not a copy
    const double lr = parts.lr_scheduler.current_lr();
    std::int64_t index = 0;
    for (const auto& group : groups) {
        auto g = string_dict();
        auto indices = plain_list();
        for (const auto& p : group.params) {
            if (const auto* param_state = state_of(engine_state, p)) {
                auto s = string_dict();
                if (const auto* a = dynamic_cast<const torch::optim::AdamWParamState*>(param_state)) {
                    s.insert("step", torch::tensor(static_cast<float>(a->step()), torch::kFloat32));
                    s.insert("exp_avg", own(a->exp_avg()));
                    s.insert("exp_avg_sq", own(a->exp_avg_sq()));
                    if (a->max_exp_avg_sq().defined()) s.insert("max_exp_avg_sq", own(a->max_exp_avg_sq()));
                } else if (const auto* m = dynamic_cast<const torch::optim::SGDParamState*>(param_state)) {
                    if (m->momentum_buffer().defined()) s.insert("momentum_buffer", own(m->momentum_buffer()));
                }
                if (!s.empty()) state.insert(index, s);
            }
            indices.push_back(index++);
        }
        // Keys in the order Python's dict has them.
        if (config.mode == Mode::Trainer) g.insert("weight_decay", group.weight_decay);
        g.insert("lr", lr);
        if (config.optimizer == OptimizerKind::AdamW) {
            const auto& o = dynamic_cast<const torch::optim::AdamWOptions&>(impl.param_groups().front().options());
            g.insert("betas", c10::ivalue::Tuple::create({std::get<0>(o.betas()), std::get<1>(o.betas())}));
            g.insert("eps", o.eps());
            g.insert("weight_decay", group.weight_decay);
            g.insert("amsgrad", o.amsgrad());
            g.insert("maximize", false);
            g.insert("foreach", c10::IValue());
            g.insert("capturable", false);
            g.insert("differentiable", false);
            g.insert("fused", c10::IValue());
            g.insert("decoupled_weight_decay", true);
        } else {
            const auto& o = dynamic_cast<const torch::optim::SGDOptions&>(impl.param_groups().front().options());
            g.insert("momentum", o.momentum());
            g.insert("dampening", o.dampening());
            g.insert("weight_decay", group.weight_decay);
            g.insert("nesterov", o.nesterov());
            g.insert("maximize", false);
            g.insert("foreach", c10::IValue());
            g.insert("differentiable", false);
            g.insert("fused", c10::IValue());
        }
        g.insert("initial_lr", config.learning_rate);
        g.insert("params", indices);
        param_groups.push_back(g);
    }
    auto out = string_dict();
    out.insert("state", state);
    out.insert("param_groups", param_groups);
    return out;
}

// After `step_count` steps: lr_lambdas holds each lambda's __dict__ ({} for the
// functools.partial of a schedule with warmup or decay, None for the plain
// function of the constant schedule).
c10::IValue python_scheduler_state(const CheckpointParts& parts, const RunConfig& config) {
    const auto groups = python_groups(parts, config).size();
    const auto steps = parts.lr_scheduler.step_count();
    const bool plain_function = config.scheduler == SchedulerKind::Constant && config.warmup_steps == 0;
    auto base_lrs = plain_list(), last_lr = plain_list(), lambdas = plain_list();
    for (std::size_t i = 0; i < groups; ++i) {
        base_lrs.push_back(config.learning_rate);
        last_lr.push_back(parts.lr_scheduler.current_lr());
        lambdas.push_back(plain_function ? c10::IValue() : c10::IValue(string_dict()));
    }
    auto out = string_dict();
    out.insert("base_lrs", base_lrs);
    out.insert("last_epoch", steps);
    out.insert("_step_count", steps + 1);
    out.insert("_is_initial", steps == 0);
    out.insert("_get_lr_called_within_step", false);
    out.insert("_last_lr", last_lr);
    out.insert("lr_lambdas", lambdas);
    return out;
}

namespace {

std::string shape_text(c10::IntArrayRef sizes) {
    std::string out = "[";
    for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
    return out + "]";
}

// The state tensor `key` of parameter `index`, on the parameter's device, in its shape.
torch::Tensor state_tensor(const c10::impl::GenericDict& s, const char* key, std::int64_t index,
                           const torch::Tensor& p) {
    if (!s.contains(key)) throw std::runtime_error("the state of parameter " + std::to_string(index) + " has no " + key);
    const auto t = s.at(key).toTensor();
    if (t.sizes() != p.sizes())
        throw std::runtime_error("the state " + std::string(key) + " of parameter " + std::to_string(index) +
                                 " has the shape " + shape_text(t.sizes()) + ", the model's parameter " +
                                 shape_text(p.sizes()));
    return t.to(p.device(), p.scalar_type());
}

} // namespace

void restore_python_optimizer_state(const CheckpointParts& parts, const RunConfig& config, const c10::IValue& value) {
    const auto groups = python_groups(parts, config);
    if (!value.isGenericDict()) throw std::runtime_error("it is not an optimizer's state_dict()");
    const auto root = value.toGenericDict();
    if (!root.contains("state") || !root.contains("param_groups"))
        throw std::runtime_error("it is not an optimizer's state_dict() (no state and param_groups)");
    const auto param_groups = root.at("param_groups").toList();
    const auto state = root.at("state").toGenericDict();
    const bool adamw = config.optimizer == OptimizerKind::AdamW;
    const char* mine = adamw ? "AdamW" : "SGD";
    if (param_groups.size() != groups.size())
        throw std::runtime_error("it has " + std::to_string(param_groups.size()) + " parameter groups, this run's " +
                                 mine + " " + std::to_string(groups.size()));
    auto& engine_state = parts.optimizer.impl().state();
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto group = param_groups.get(g).toGenericDict();
        const bool theirs_adamw = group.contains("betas");
        if (theirs_adamw != adamw)
            throw std::runtime_error(std::string("it is the state of torch.optim.") + (theirs_adamw ? "AdamW" : "SGD") +
                                     ", this run's optimizer is " + mine);
        const auto indices = group.at("params").toList();
        if (indices.size() != groups[g].params.size())
            throw std::runtime_error("its parameter group " + std::to_string(g) + " has " +
                                     std::to_string(indices.size()) + " parameters, this run's model " +
                                     std::to_string(groups[g].params.size()));
        for (std::size_t j = 0; j < indices.size(); ++j) {
            const auto index = indices.get(j).toInt();
            if (!state.contains(index)) continue; // never stepped
            const auto s = state.at(index).toGenericDict();
            const auto& p = groups[g].params[j];
            std::unique_ptr<torch::optim::OptimizerParamState> restored;
            if (adamw) {
                auto a = std::make_unique<torch::optim::AdamWParamState>();
                if (!s.contains("step")) throw std::runtime_error("the state of parameter " + std::to_string(index) + " has no step");
                const auto step = s.at("step");
                a->step(static_cast<std::int64_t>(std::llround(step.isTensor() ? step.toTensor().item<double>() : step.toDouble())));
                a->exp_avg(state_tensor(s, "exp_avg", index, p));
                a->exp_avg_sq(state_tensor(s, "exp_avg_sq", index, p));
                if (s.contains("max_exp_avg_sq")) a->max_exp_avg_sq(state_tensor(s, "max_exp_avg_sq", index, p));
                restored = std::move(a);
            } else {
                if (!s.contains("momentum_buffer")) continue;
                auto m = std::make_unique<torch::optim::SGDParamState>();
                m->momentum_buffer(state_tensor(s, "momentum_buffer", index, p));
                restored = std::move(m);
            }
            engine_state[key_of(engine_state, p)] = std::move(restored);
        }
    }
}

} // namespace accum
