#include "distributed/gradient_sync.h"

#include <chrono>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace accum::dist {

namespace {

using Clock = std::chrono::steady_clock;

// Consecutive tensors of one dtype and device share a bucket until it would
// pass the cap; a tensor larger than the cap has a bucket of its own. `extras`
// float values go at the end of the last bucket when it holds float32, else in
// a bucket of their own.
std::vector<FlatBucket> make_layout(const std::vector<at::Tensor>& tensors, std::size_t cap_bytes,
                                    std::int64_t extras = 0) {
    std::vector<FlatBucket> layout;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        const std::size_t size = static_cast<std::size_t>(t.numel()) * t.element_size();
        const bool fits = !layout.empty() && bytes + size <= cap_bytes &&
                          tensors[layout.back().members.front()].scalar_type() == t.scalar_type() &&
                          tensors[layout.back().members.front()].device() == t.device();
        if (!fits) {
            layout.emplace_back();
            bytes = 0;
        }
        auto& b = layout.back();
        b.members.push_back(i);
        b.offsets.push_back(b.numel);
        b.numel += t.numel();
        bytes += size;
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

// Whether the tensor is the bucket's own memory at its place (bind_gradients).
bool is_bucket_view(const FlatBucket& b, std::size_t j, const at::Tensor& t) {
    return t.is_contiguous() && t.data_ptr() == static_cast<char*>(b.buffer.data_ptr()) + b.offsets[j] * t.element_size();
}

void pack(FlatBucket& b, const std::vector<at::Tensor>& tensors) {
    for (std::size_t j = 0; j < b.members.size(); ++j) {
        const auto& t = tensors[b.members[j]];
        if (!is_bucket_view(b, j, t)) b.buffer.narrow(0, b.offsets[j], t.numel()).copy_(t.reshape({-1}));
    }
}

void unpack(const FlatBucket& b, const std::vector<at::Tensor>& tensors) {
    for (std::size_t j = 0; j < b.members.size(); ++j) {
        auto t = tensors[b.members[j]];
        if (!is_bucket_view(b, j, t)) t.copy_(b.buffer.narrow(0, b.offsets[j], t.numel()).view(t.sizes()));
    }
}

} // namespace

GradientSync::GradientSync(ProcessGroup& group, std::size_t bucket_bytes)
    : group_(group), bucket_bytes_(bucket_bytes) {
    if (bucket_bytes_ == 0) throw std::invalid_argument("GradientSync: bucket size must be positive");
}

void GradientSync::plan(const std::vector<at::Tensor>& gradients, std::int64_t extras) {
    bool same = shapes_.size() == gradients.size() && !layout_.empty() && extras == extras_;
    for (std::size_t i = 0; same && i < gradients.size(); ++i)
        same = shapes_[i] == gradients[i].sizes().vec() && dtypes_[i] == gradients[i].scalar_type() &&
               layout_.front().buffer.device() == gradients[i].device();
    if (same) return;
    shapes_.clear();
    dtypes_.clear();
    for (const auto& g : gradients) {
        shapes_.push_back(g.sizes().vec());
        dtypes_.push_back(g.scalar_type());
    }
    extras_ = extras;
    layout_ = make_layout(gradients, bucket_bytes_, extras);
}

void GradientSync::reduce(const std::vector<at::Tensor>& gradients, std::vector<float>* extras) {
    const std::int64_t n_extras = extras ? static_cast<std::int64_t>(extras->size()) : 0;
    if (group_.world_size() == 1 || (gradients.empty() && n_extras == 0)) return;
    for (const auto& g : gradients)
        if (!g.defined()) throw std::invalid_argument("GradientSync::average: an undefined gradient");
    const auto start = Clock::now();
    const at::NoGradGuard no_grad;
    plan(gradients, n_extras);
    const double world = static_cast<double>(group_.world_size());
    for (auto& b : layout_) {
        pack(b, gradients);
        // Divided before the sum, as DDP's reducer does: a sum of scaled
        // gradients (a loss scaler's S up to float32's largest) must not
        // overflow where their mean would not.
        if (b.numel > 0) b.buffer.narrow(0, 0, b.numel).div_(world);
        // The extras' place in the buffer (host or device memory alike).
        at::Tensor tail;
        if (b.extras > 0) {
            tail = b.buffer.narrow(0, b.numel, b.extras);
            tail.copy_(at::from_blob(extras->data(), {b.extras}, at::TensorOptions().dtype(at::kFloat)));
        }
        group_.all_reduce(b.buffer, ReduceOp::Sum);
        unpack(b, gradients);
        if (tail.defined()) {
            const auto sums = tail.cpu().contiguous();
            std::copy(sums.data_ptr<float>(), sums.data_ptr<float>() + b.extras, extras->begin());
        }
        counters_.calls += 1;
        counters_.bytes += (b.numel + b.extras) * static_cast<std::int64_t>(b.buffer.element_size());
    }
    counters_.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void GradientSync::average(const std::vector<at::Tensor>& gradients) { reduce(gradients, nullptr); }

namespace {
std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& parameters) {
    std::vector<at::Tensor> grads;
    grads.reserve(parameters.size());
    for (const auto& p : parameters) {
        auto& g = p.mutable_grad();
        if (!g.defined()) g = at::zeros_like(p);
        grads.push_back(g);
    }
    return grads;
}
} // namespace

void GradientSync::average_gradients_of(const std::vector<at::Tensor>& parameters) {
    average(gradients_of(parameters));
}

void GradientSync::average_gradients_of(const std::vector<at::Tensor>& parameters, std::vector<float>& extras) {
    if (group_.world_size() == 1) return;
    reduce(gradients_of(parameters), &extras);
}

void GradientSync::bind_gradients(const std::vector<at::Tensor>& parameters) {
    const at::NoGradGuard no_grad;
    std::vector<at::Tensor> grads;
    grads.reserve(parameters.size());
    for (const auto& p : parameters) {
        auto& g = p.mutable_grad();
        grads.push_back(g.defined() ? g : at::zeros_like(p));
    }
    plan(grads);
    for (auto& b : layout_) {
        pack(b, grads);
        for (std::size_t j = 0; j < b.members.size(); ++j) {
            const auto& p = parameters[b.members[j]];
            p.mutable_grad() = b.buffer.narrow(0, b.offsets[j], p.numel()).view(p.sizes());
        }
    }
}

SyncCounters GradientSync::take_counters() {
    const SyncCounters out = counters_;
    counters_ = SyncCounters{};
    return out;
}

void broadcast_tensors(ProcessGroup& group, const std::vector<at::Tensor>& tensors, int root, std::size_t bucket_bytes) {
    if (group.world_size() == 1 || tensors.empty()) return;
    const at::NoGradGuard no_grad;
    std::vector<at::Tensor> plain;
    plain.reserve(tensors.size());
    for (const auto& t : tensors) plain.push_back(t.detach());
    auto layout = make_layout(plain, bucket_bytes);
    for (auto& b : layout) {
        if (group.rank() == root) pack(b, plain);
        group.broadcast(b.buffer, root);
        if (group.rank() != root) unpack(b, plain);
    }
}

} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
