#include "distributed/gradient_sync.h"

#include <chrono>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace accum::dist {

namespace {

using Clock = std::chrono::steady_clock;

// Consecutive tensors of one dtype and device share a bucket until it would
// pass the cap; a tensor larger than the cap has a bucket of its own.
std::vector<FlatBucket> make_layout(const std::vector<at::Tensor>& tensors, std::size_t cap_bytes) {
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
    for (auto& b : layout) {
        const auto& first = tensors[b.members.front()];
        b.buffer = at::empty({b.numel}, first.options());
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

void GradientSync::plan(const std::vector<at::Tensor>& gradients) {
    bool same = shapes_.size() == gradients.size() && !layout_.empty();
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
    layout_ = make_layout(gradients, bucket_bytes_);
}

void GradientSync::average(const std::vector<at::Tensor>& gradients) {
    if (group_.world_size() == 1 || gradients.empty()) return;
    for (const auto& g : gradients)
        if (!g.defined()) throw std::invalid_argument("GradientSync::average: an undefined gradient");
    const auto start = Clock::now();
    const at::NoGradGuard no_grad;
    plan(gradients);
    const double world = static_cast<double>(group_.world_size());
    for (auto& b : layout_) {
        pack(b, gradients);
        group_.all_reduce(b.buffer, ReduceOp::Sum);
        b.buffer.div_(world);
        unpack(b, gradients);
        counters_.calls += 1;
        counters_.bytes += b.numel * static_cast<std::int64_t>(b.buffer.element_size());
    }
    counters_.seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void GradientSync::average_gradients_of(const std::vector<at::Tensor>& parameters) {
    std::vector<at::Tensor> grads;
    grads.reserve(parameters.size());
    for (const auto& p : parameters) {
        auto& g = p.mutable_grad();
        if (!g.defined()) g = at::zeros_like(p);
        grads.push_back(g);
    }
    average(grads);
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
