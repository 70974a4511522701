#pragma once
// Gradients averaged across the ranks as DistributedDataParallel's reducer
// does it: the tensors are copied into a few flat buffers of at most
// bucket_bytes each (DDP's bucket_cap_mb = 25 MiB), each buffer is divided by
// the world size and one all-reduce sums it across the ranks (divided first,
// as DDP's reducer divides: a sum of scaled gradients must not overflow where
// their mean does not), and the mean is copied back. The MLP's and the CNN's
// gradients fit one bucket: one call per sync.
// Which micro-batches sync (once per window, or each one in the pitfall) is
// the caller's decision, made before forward as DDP's no_sync() makes it.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "distributed/process_group.h"

namespace accum::dist {

inline constexpr std::size_t kDefaultBucketBytes = std::size_t{25} << 20;

// One flat buffer and where each of its tensors lies in it. The last bucket
// may end with `extras` float values that travel with the gradients and are
// summed, not averaged (average() with extras).
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
    // passes tensors of the same shapes, dtypes and order. Nothing happens (and
    // nothing is counted) in a world of one. Throws DistributedError.
    void average(const std::vector<at::Tensor>& gradients);
    // The same for the parameters' .grad; a parameter without one gets zeros
    // first, so that every rank's buckets line up.
    void average_gradients_of(const std::vector<at::Tensor>& parameters);
    // average_gradients_of, with a few float values riding in the last bucket
    // (a float32 one; else a small bucket of their own): on return `extras`
    // holds their sums over the ranks. Every rank passes as many. So a window's
    // loss, a stop request or memory figures cost no collective of their own.
    // In a world of one the extras come back as they are.
    void average_gradients_of(const std::vector<at::Tensor>& parameters, std::vector<float>& extras);

    // Makes each parameter's .grad a view into the buckets (its value kept), as
    // DDP's gradient_as_bucket_view=True does: average() then reduces them in
    // place, without the two copies (a quarter of the MLP's sync here). A
    // gradient that is no longer such a view (replaced, or set to none by
    // zero_grad(true), LibTorch 2.x's default) is simply copied as before.
    void bind_gradients(const std::vector<at::Tensor>& parameters);

    const SyncCounters& counters() const { return counters_; }
    SyncCounters take_counters();
    // Buckets of the last layout (0 before the first sync).
    std::size_t buckets() const { return layout_.size(); }

private:
    void plan(const std::vector<at::Tensor>& gradients, std::int64_t extras = 0);
    void reduce(const std::vector<at::Tensor>& gradients, std::vector<float>* extras);

    ProcessGroup& group_;
    std::size_t bucket_bytes_;
    std::vector<FlatBucket> layout_;
    std::vector<std::vector<std::int64_t>> shapes_; // what the layout was made for
    std::vector<at::ScalarType> dtypes_;
    std::int64_t extras_ = 0;
    SyncCounters counters_;
};

// Rank `root`'s values into every rank's tensors, in place (initial weights,
// buffers such as BatchNorm's statistics), bucketed the same way. Throws
// DistributedError.
void broadcast_tensors(ProcessGroup& group, const std::vector<at::Tensor>& tensors, int root = 0,
                       std::size_t bucket_bytes = kDefaultBucketBytes);

} // namespace accum::dist
// SPDX-License-Identifier: GPL-3.0-or-later
