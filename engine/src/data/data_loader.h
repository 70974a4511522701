#pragma once
// Batches in a seeded order. The permutation of an epoch depends only on the
// seed and the epoch (not on the batch size), so micro-batch B with K steps and
// batch B*K see the same samples in every update.

#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace accum {

std::vector<std::int64_t> epoch_permutation(std::int64_t size, std::uint64_t seed, std::int64_t epoch, bool shuffle);

class DataLoader {
public:
    DataLoader(const TensorDataset& dataset, std::int64_t batch_size, bool shuffle, std::uint64_t seed);

    void set_epoch(std::int64_t epoch);
    std::int64_t size() const; // batches per epoch, the last one may be partial
    std::int64_t batch_size() const { return batch_size_; }
    const TensorDataset& dataset() const { return *dataset_; }
    Batch batch(std::int64_t index) const;
    // Label items (samples, or tokens) in batches [first, last).
    std::int64_t items_in(std::int64_t first, std::int64_t last) const;

private:
    const TensorDataset* dataset_;
    std::int64_t batch_size_;
    bool shuffle_;
    std::uint64_t seed_;
    std::vector<std::int64_t> order_;
};

} // namespace accum
