// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/gradient_sync.h"

#include <chrono>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace accum::dist {

namespace {

// Consecutive tensors of one dtype and device share a bucket until it would
// pass the cap; a tensor larger than the cap has a bucket of its own.
std::vector<FlatBucket> make_layout(const std::vector<at::Tensor>& tensors, std::size_t cap_bytes,
                                    std::int64_t extras = 0) {
    std::vector<FlatBucket> layout;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        const at::Tensor* first = layout.empty() ? nullptr : &tensors[layout.back().members.front()];
        const bool fits = first && first->scalar_type() == t.scalar_type() && first->device() == t.device() &&
                          static_cast<std::size_t>(layout.back().numel + t.numel()) * t.element_size() <= cap_bytes;
        if (!fits) layout.emplace_back();
        auto& b = layout.back();
        b.members.push_back(i);
        b.offsets.push_back(b.numel);
        b.numel += t.numel();
    }
    if (extras > 0) {
        const bool fits = !layout.empty() && tensors[layout.back().members.front()].scalar_type() == at::kFloat;
        if (!fits) layout.emplace_back();
        layout.back().extras = extras;
    }
    for (auto& b : layout) {
        const auto options = b.members.empty() ? at::TensorOptions().dtype(at::kFloat)
                                                : tensors[b.members.front()].options();
        b.buffer = at::empty({b.numel + b.extras}, options);
    }
    return layout;
}

// Copies the tensors into their places in the bucket, or back.
void copy(const FlatBucket& b, const std::vector<at::Tensor>& tensors, bool into_bucket) {
    for (std::size_t j = 0; j < b.members.size(); ++j) {
        auto t = tensors[b.members[j]];
        auto place = b.buffer.narrow(0, b.offsets[j], t.numel());
        if (into_bucket) place.copy_(t.reshape({-1}));
        else t.copy_(place.view(t.sizes()));
    }
}

} // namespace

GradientSync::GradientSync(ProcessGroup& group, std::size_t bucket_bytes)
    : group_(group), bucket_bytes_(bucket_bytes) {
    if (bucket_bytes_ == 0) throw std::invalid_argument("GradientSync: bucket size must be positive");
}

void GradientSync::plan(const std::vector<at::Tensor>& gradients, std::int64_t extras) {
    decltype(made_for_) made_for;
    for (const auto& g : gradients) made_for.emplace_back(g.sizes().vec(), g.scalar_type(), g.device());
    if (!layout_.empty() && made_for == made_for_ && layout_.back().extras == extras) return;
    made_for_ = std::move(made_for);
    layout_ = make_layout(gradients, bucket_bytes_, extras);
}

void GradientSync::average(const std::vector<at::Tensor>& gradients, std::span<float> extras) {
    const auto n_extras = static_cast<std::int64_t>(extras.size());
    if (group_.world_size() == 1 || (gradients.empty() && n_extras == 0)) return;
    for (const auto& g : gradients)
        if (!g.defined()) throw std::invalid_argument("GradientSync::average: an undefined gradient");
    const auto start = Clock::now();
    const at::NoGradGuard no_grad;
    plan(gradients, n_extras);
    const double world = static_cast<double>(group_.world_size());
    for (auto& b : layout_) {
        copy(b, gradients, /*into_bucket=*/true);
        // Divided before the sum, as DDP's reducer does (I16): a sum of scaled
        // gradients must not overflow where their mean would not.
        if (b.numel > 0) b.buffer.narrow(0, 0, b.numel).div_(world);
        const auto tail = b.buffer.narrow(0, b.numel, b.extras); // the extras' place (host or device memory)
        if (b.extras > 0) tail.copy_(at::from_blob(extras.data(), {b.extras}, at::kFloat));
        group_.all_reduce(b.buffer, ReduceOp::Sum);
        copy(b, gradients, /*into_bucket=*/false);
        if (b.extras > 0) at::from_blob(extras.data(), {b.extras}, at::kFloat).copy_(tail);
        counters_.calls += 1;
        counters_.bytes += (b.numel + b.extras) * static_cast<std::int64_t>(b.buffer.element_size());
    }
    counters_.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void GradientSync::average_gradients_of(const std::vector<at::Tensor>& parameters, std::span<float> extras) {
    std::vector<at::Tensor> grads;
    for (const auto& p : parameters) {
        auto& g = p.mutable_grad();
        if (!g.defined()) g = at::zeros_like(p);
        grads.push_back(g);
    }
    average(grads, extras);
}

void broadcast_tensors(ProcessGroup& group, const std::vector<at::Tensor>& tensors) {
    if (group.world_size() == 1 || tensors.empty()) return;
    const at::NoGradGuard no_grad; // parameters that require grad are written in place
    auto layout = make_layout(tensors, kDefaultBucketBytes);
    for (auto& b : layout) {
        if (group.rank() == 0) copy(b, tensors, /*into_bucket=*/true);
        group.broadcast(b.buffer);
        if (group.rank() != 0) copy(b, tensors, /*into_bucket=*/false);
    }
}

} // namespace accum::dist
