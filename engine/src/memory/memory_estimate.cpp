#include "memory/memory_estimate.h"

#include <algorithm>
#include <stdexcept>

#include <c10/core/ScalarType.h>

#include "memory/counting_allocator.h"

namespace accum::memory {

int optimizer_state_copies(const OptimizerSpec& o) {
    switch (o.kind) {
    case OptimizerSpec::Kind::Sgd:
        return o.momentum > 0 ? 1 : 0;
    case OptimizerSpec::Kind::AdamW:
        return o.amsgrad ? 3 : 2;
    }
    return 0;
}

StaticEstimate estimate_static(const std::vector<at::Tensor>& parameters, const OptimizerSpec& optimizer,
                               const c10::Device& device) {
    StaticEstimate e;
    const int copies = optimizer_state_copies(optimizer);
    std::int64_t largest = 0;
    for (const auto& p : parameters) {
        if (!p.defined()) continue;
        const std::string dtype = c10::toString(p.scalar_type());
        auto found = std::find_if(e.by_dtype.begin(), e.by_dtype.end(), [&](const DtypeBytes& d) { return d.dtype == dtype; });
        if (found == e.by_dtype.end()) {
            e.by_dtype.push_back({dtype, 0, 0, 0});
            found = e.by_dtype.end() - 1;
        }
        const auto bytes = allocator_bytes(static_cast<std::int64_t>(p.numel() * p.element_size()), device);
        found->parameters_bytes += bytes;
        if (!p.requires_grad()) e.total.frozen_parameters_bytes += bytes; // the step never touches it
        if (p.requires_grad()) {
            largest = std::max(largest, bytes);
            found->gradients_bytes += bytes;
            found->optimizer_state_bytes += copies * bytes;
        }
    }
    for (const auto& d : e.by_dtype) {
        e.total.parameters_bytes += d.parameters_bytes;
        e.total.gradients_bytes += d.gradients_bytes;
        e.total.optimizer_state_bytes += d.optimizer_state_bytes;
    }
    switch (optimizer.kind) {
    case OptimizerSpec::Kind::Sgd: // d_p + weight_decay · p, then d_p + momentum · buf (Nesterov)
        e.step_temporary_bytes = ((optimizer.weight_decay != 0) + (optimizer.nesterov && optimizer.momentum > 0)) * largest;
        break;
    case OptimizerSpec::Kind::AdamW: // sqrt(v̂) and sqrt(v̂) / √(1 - β₂ᵗ) (+ max(v̂) with amsgrad)
        e.step_temporary_bytes = (optimizer.amsgrad ? 3 : 2) * largest;
        break;
    }
    return e;
}

LinearFit fit_line(const std::vector<ProbePoint>& points) {
    LinearFit f;
    f.points = points;
    if (points.empty()) return f;
    const double n = static_cast<double>(points.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& p : points) {
        const double x = static_cast<double>(p.batch_size), y = static_cast<double>(p.bytes);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    const double denom = n * sxx - sx * sx;
    if (denom > 0) {
        f.per_sample_bytes = std::max(0.0, (n * sxy - sx * sy) / denom);
        f.fixed_bytes = std::max(0.0, (sy - f.per_sample_bytes * sx) / n);
    } else {
        f.per_sample_bytes = sx > 0 ? sy / sx : 0.0;
    }
    return f;
}

AllocatorReadings cpu_counting_allocator() {
    AllocatorReadings r;
    r.device = c10::Device(c10::kCPU);
    r.current = [] { return cpu_counters().current; };
    r.peak = [] { return cpu_counters().window_peak; };
    r.reset_peak = [] { reset_window_peak(); };
    return r;
}

std::vector<ProbePoint> probe_activations(const std::function<void(std::int64_t)>& micro_step,
                                          const std::vector<at::Tensor>& parameters,
                                          const std::vector<std::int64_t>& sizes, const AllocatorReadings& allocator) {
    if (!allocator.current || !allocator.peak || !allocator.reset_peak)
        throw std::logic_error("probe_activations: the allocator readings are incomplete");
    if (allocator.device.is_cpu()) { // a counted allocation shows whether counting is on here
        const auto before = allocator.current();
        const auto probe = at::empty({1024}, at::kByte);
        if (allocator.current() - before < 1024)
            throw std::logic_error("probe_activations: the counting allocator is not counting on this thread "
                                   "(install_counting_allocator() and a CountingScope are needed)");
    }
    // Each probe runs as micro-batches 2..K of a window do: the gradients exist
    // already (zeros here), so backward adds into them and the peak less the
    // memory before is the activations alone. Without them the peak came
    // before the largest gradients were made (an embedding's comes last), and
    // taking the gradients off after undercounted a model whose gradients are
    // as large as its activations.
    for (const auto& p : parameters)
        if (p.defined() && p.requires_grad() && !p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    std::vector<ProbePoint> points;
    for (const auto b : sizes) {
        const auto before = allocator.current();
        allocator.reset_peak();
        micro_step(b);
        points.push_back({b, allocator.peak() - before});
    }
    for (const auto& p : parameters) // the gradients as they were: none
        if (p.defined() && p.grad().defined()) p.mutable_grad().reset();
    return points;
}

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
