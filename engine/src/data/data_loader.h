#pragma once
// Batches in a seeded order. The permutation of an epoch depends only on the
// seed and the epoch (not on the batch size), so micro-batch B with K steps and
// batch B*K see the same samples in every update. In a data-parallel run each
// rank's loader holds its shard of every epoch's permutation, as
// DistributedSampler(drop_last=False) shares it out (data/sharding.h):
// the j-th micro-batches of N ranks together are the j-th micro-batch of one
// process with an N-times larger micro-batch.

#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace accum {

std::vector<std::int64_t> epoch_permutation(std::int64_t size, std::uint64_t seed, std::int64_t epoch, bool shuffle);

class DataLoader {
public:
    DataLoader(const TensorDataset& dataset, std::int64_t batch_size, bool shuffle, std::uint64_t seed);

    // This rank's shard of every epoch from now on (rank 0 of 1: all samples).
    void shard(int rank, int world_size);
    void set_epoch(std::int64_t epoch);
    std::int64_t size() const; // batches per epoch, the last one may be partial
    std::int64_t samples() const { return static_cast<std::int64_t>(order_.size()); } // this rank's, per epoch
    std::int64_t batch_size() const { return batch_size_; }
    const TensorDataset& dataset() const { return *dataset_; }
    Batch batch(std::int64_t index) const;
    // Label items (samples, or tokens) in batches [first, last) — of every rank
    // together in a sharded loader: the num_items_in_batch of the window, which
    // Transformers gathers from the processes and every rank here counts from
    // the seeded order.
    std::int64_t items_in(std::int64_t first, std::int64_t last) const;

private:
    const TensorDataset* dataset_;
    std::int64_t batch_size_;
    bool shuffle_;
    std::uint64_t seed_;
    int rank_ = 0;
    int world_size_ = 1;
    std::int64_t epoch_ = 0;
    std::vector<std::int64_t> permutation_; // the epoch's, of every sample
    std::vector<std::int64_t> order_;       // this rank's part of it
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
