#include "memory/memory_categories.h"

#include <algorithm>
#include <stdexcept>
#include <typeinfo>
#include <unordered_set>

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/lbfgs.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

namespace accum::memory {

namespace {

constexpr std::int64_t kCudaBlock = 512; // the caching allocator's smallest block and rounding

bool on_device(const at::Tensor& t, const c10::Device& device) {
    if (t.device().type() != device.type()) return false;
    return !device.has_index() || t.device().index() == device.index();
}

// Adds the bytes of each storage not seen before.
class StorageCounter {
public:
    explicit StorageCounter(const c10::Device& device) : device_(device) {}
    std::int64_t add(const at::Tensor& t) {
        if (!t.defined() || !t.has_storage() || !on_device(t, device_)) return 0;
        const auto& storage = t.storage();
        const void* data = storage.data_ptr().get();
        if (data == nullptr || !seen_.insert(data).second) return 0;
        return allocator_bytes(static_cast<std::int64_t>(storage.nbytes()), device_);
    }

private:
    c10::Device device_;
    std::unordered_set<const void*> seen_;
};

template <class State>
const State* as(const torch::optim::OptimizerParamState& s) {
    return dynamic_cast<const State*>(&s);
}

} // namespace

std::vector<at::Tensor> optimizer_state_tensors(const torch::optim::Optimizer& optimizer) {
    std::vector<at::Tensor> out;
    auto add = [&](const at::Tensor& t) {
        if (t.defined()) out.push_back(t);
    };
    for (const auto& [key, state] : optimizer.state()) {
        if (!state) continue;
        if (const auto* s = as<torch::optim::SGDParamState>(*state)) {
            add(s->momentum_buffer());
        } else if (const auto* s = as<torch::optim::AdamWParamState>(*state)) {
            add(s->exp_avg());
            add(s->exp_avg_sq());
            add(s->max_exp_avg_sq());
        } else if (const auto* s = as<torch::optim::AdamParamState>(*state)) {
            add(s->exp_avg());
            add(s->exp_avg_sq());
            add(s->max_exp_avg_sq());
        } else if (const auto* s = as<torch::optim::AdagradParamState>(*state)) {
            add(s->sum());
        } else if (const auto* s = as<torch::optim::RMSpropParamState>(*state)) {
            add(s->square_avg());
            add(s->momentum_buffer());
            add(s->grad_avg());
        } else if (const auto* s = as<torch::optim::LBFGSParamState>(*state)) {
            add(s->d());
            add(s->H_diag());
            add(s->prev_flat_grad());
            for (const auto& t : s->old_dirs()) add(t);
            for (const auto& t : s->old_stps()) add(t);
            for (const auto& t : s->ro()) add(t);
            if (s->al())
                for (const auto& t : *s->al()) add(t);
        } else {
            throw std::invalid_argument(std::string("optimizer state of an unknown type (") + typeid(*state).name() +
                                        "): its memory cannot be counted");
        }
    }
    return out;
}

std::int64_t allocator_bytes(std::int64_t nbytes, const c10::Device& device) {
    if (nbytes <= 0) return 0;
    if (device.is_cuda()) return (nbytes + kCudaBlock - 1) / kCudaBlock * kCudaBlock;
    return nbytes;
}

StaticMemory static_memory(const std::vector<at::Tensor>& parameters, const torch::optim::Optimizer* optimizer,
                           const c10::Device& device) {
    StaticMemory m;
    StorageCounter counter(device);
    for (const auto& p : parameters) {
        const auto bytes = counter.add(p);
        m.parameters_bytes += bytes;
        if (p.defined() && !p.requires_grad()) m.frozen_parameters_bytes += bytes;
    }
    for (const auto& p : parameters) // only leaves have a .grad (asking a view warns)
        if (p.defined() && p.is_leaf()) m.gradients_bytes += counter.add(p.grad());
    if (optimizer)
        for (const auto& t : optimizer_state_tensors(*optimizer)) m.optimizer_state_bytes += counter.add(t);
    return m;
}

MemoryCategories categorize(const StaticMemory& fixed, std::int64_t allocator_total) {
    MemoryCategories c;
    c.parameters_bytes = fixed.parameters_bytes;
    c.frozen_parameters_bytes = fixed.frozen_parameters_bytes;
    c.gradients_bytes = fixed.gradients_bytes;
    c.optimizer_state_bytes = fixed.optimizer_state_bytes;
    c.total_bytes = allocator_total;
    c.activations_bytes = std::max<std::int64_t>(0, allocator_total - fixed.total());
    return c;
}

PeakComposition compose_peak(std::int64_t peak, const StaticMemory& at_peak) {
    PeakComposition c;
    c.peak_bytes = std::max<std::int64_t>(0, peak);
    c.parameters_bytes = at_peak.parameters_bytes;
    c.gradients_bytes = at_peak.gradients_bytes;
    c.optimizer_state_bytes = at_peak.optimizer_state_bytes;
    std::int64_t excess = at_peak.total() - c.peak_bytes;
    c.activations_bytes = std::max<std::int64_t>(0, -excess);
    for (auto* part : {&c.gradients_bytes, &c.optimizer_state_bytes, &c.parameters_bytes}) {
        const auto off = std::clamp<std::int64_t>(excess, 0, *part);
        *part -= off;
        excess -= off;
    }
    return c;
}

void ActivationPeakMeter::seen(std::int64_t peak, const StaticMemory& at_peak, Phase phase, bool in_step,
                               std::int64_t held) {
    const auto excess = std::max<std::int64_t>(0, peak - at_peak.total() - held);
    if (in_step) {
        step_.peak_bytes = std::max(step_.peak_bytes, peak);
        auto& part = phase == Phase::Activations ? step_.peak_activations_bytes : step_.peak_optimizer_step_bytes;
        part = std::max(part, excess);
    }
    if (phase == Phase::Activations) interval_activations_ = std::max(interval_activations_, excess);
    if (peak > interval_peak_) {
        interval_peak_ = peak;
        interval_static_ = at_peak;
    }
}

void ActivationPeakMeter::after_backward(std::int64_t peak, const StaticMemory& now) {
    after_backward_ = now;
    seen(peak, now, Phase::Activations, true);
}

void ActivationPeakMeter::after_step(std::int64_t peak, const StaticMemory& now, std::int64_t held) {
    // The gradients lived until zero_grad: the last backward's; the optimizer state is the new one.
    StaticMemory at_peak = after_backward_;
    at_peak.optimizer_state_bytes = now.optimizer_state_bytes;
    seen(peak, at_peak, Phase::OptimizerStep, true, held);
}

void ActivationPeakMeter::at_record(std::int64_t peak, const StaticMemory& now) {
    seen(peak, now, Phase::Activations, true);
}

void ActivationPeakMeter::outside_steps(std::int64_t peak, const StaticMemory& now) {
    seen(peak, now, Phase::Activations, false);
}

PeakComposition ActivationPeakMeter::interval() const {
    auto c = compose_peak(interval_peak_, interval_static_);
    const auto rest = c.activations_bytes;
    c.activations_bytes = std::min(rest, interval_activations_);
    c.optimizer_step_bytes = rest - c.activations_bytes;
    return c;
}

PeakComposition ActivationPeakMeter::take_interval() {
    const auto c = interval();
    interval_peak_ = 0;
    interval_static_ = {};
    interval_activations_ = 0;
    return c;
}

ActivationPeakMeter::StepPeak ActivationPeakMeter::take_step() {
    const auto s = step_;
    step_ = {};
    return s;
}

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
