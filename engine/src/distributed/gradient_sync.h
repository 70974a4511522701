// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Gradients averaged across the ranks as DistributedDataParallel's reducer
// does it (ARCHITECTURE.md I15, I16): copied into flat buffers of at most
// bucket_bytes each (DDP's bucket_cap_mb = 25 MiB), each divided by the world
// size, summed by one all-reduce, and copied back. When to sync is the caller's.

#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "distributed/process_group.h"

namespace accum::dist {

inline constexpr std::size_t kDefaultBucketBytes = std::size_t{25} << 20;

// One flat buffer and where each of its tensors lies in it.
struct FlatBucket {
    std::vector<std::size_t> members; // indices into the tensor list
    std::vector<std::int64_t> offsets;
    std::int64_t numel = 0;           // of the tensors
    std::int64_t extras = 0;          // float values after them
    at::Tensor buffer;
};

// Communication since the counters were last taken.
struct SyncCounters {
    std::int64_t calls = 0; // all-reduce calls (one per bucket per sync)
    double seconds = 0;     // wall time of the syncs, copies into and out of the buckets included
    std::int64_t bytes = 0; // bytes this rank all-reduced
};

class GradientSync {
public:
    explicit GradientSync(ProcessGroup& group, std::size_t bucket_bytes = kDefaultBucketBytes);

    // Replaces each tensor, in place, by its mean over the ranks. Every rank
    // passes tensors of the same shapes, dtypes and order, and as many
    // `extras`: float values riding in the last bucket (a float32 one; else a
    // small bucket of their own), which on return hold their sums over the
    // ranks (SyncPassenger). Nothing happens (and nothing is counted) in a
    // world of one. Throws DistributedError.
    void average(const std::vector<at::Tensor>& gradients, std::span<float> extras = {});
    // The same for the parameters' .grad; a parameter without one gets zeros
    // first, so that every rank's buckets line up.
    void average_gradients_of(const std::vector<at::Tensor>& parameters, std::span<float> extras = {});

    const SyncCounters& counters() const { return counters_; }
    SyncCounters take_counters() { return std::exchange(counters_, SyncCounters{}); }
    // Buckets of the last layout (0 before the first sync).
    std::size_t buckets() const { return layout_.size(); }

private:
    void plan(const std::vector<at::Tensor>& gradients, std::int64_t extras);

    ProcessGroup& group_;
    std::size_t bucket_bytes_;
    std::vector<FlatBucket> layout_;
    // What the layout was made for: each tensor's shape, dtype and device.
    std::vector<std::tuple<std::vector<std::int64_t>, at::ScalarType, at::Device>> made_for_;
    SyncCounters counters_;
};

// Rank 0's values into every rank's tensors, in place (initial weights,
// buffers such as BatchNorm's statistics), bucketed the same way. Throws
// DistributedError.
void broadcast_tensors(ProcessGroup& group, const std::vector<at::Tensor>& tensors);

} // namespace accum::dist
