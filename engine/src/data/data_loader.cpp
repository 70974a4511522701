#include "data/data_loader.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "data/sharding.h"

namespace accum {

std::vector<std::int64_t> epoch_permutation(std::int64_t size, std::uint64_t seed, std::int64_t epoch, bool shuffle) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(size));
    for (std::int64_t i = 0; i < size; ++i) order[static_cast<std::size_t>(i)] = i;
    if (!shuffle) return order;
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(epoch), 0x5a17u};
    std::mt19937_64 rng(seq);
    // Fisher-Yates with our own draw, so the order is the same with every standard library.
    for (std::int64_t i = size - 1; i > 0; --i) {
        const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i + 1));
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    return order;
}

DataLoader::DataLoader(const TensorDataset& dataset, std::int64_t batch_size, bool shuffle, std::uint64_t seed)
    : dataset_(&dataset), batch_size_(batch_size), shuffle_(shuffle), seed_(seed) {
    set_epoch(0);
}

void DataLoader::shard(int rank, int world_size) {
    if (world_size < 1 || rank < 0 || rank >= world_size)
        throw std::invalid_argument("DataLoader::shard: rank " + std::to_string(rank) + " of " +
                                    std::to_string(world_size));
    rank_ = rank;
    world_size_ = world_size;
    set_epoch(epoch_);
}

void DataLoader::set_epoch(std::int64_t epoch) {
    epoch_ = epoch;
    permutation_ = epoch_permutation(dataset_->size(), seed_, epoch, shuffle_);
    order_ = world_size_ > 1 ? accum::shard(permutation_, rank_, world_size_) : permutation_;
}

std::int64_t DataLoader::size() const { return (samples() + batch_size_ - 1) / batch_size_; }

Batch DataLoader::batch(std::int64_t index) const {
    const std::int64_t begin = index * batch_size_;
    const std::int64_t end = std::min(begin + batch_size_, samples());
    std::vector<std::int64_t> idx(order_.begin() + begin, order_.begin() + end);
    Batch b = dataset_->gather(idx);
    b.index = index;
    return b;
}

std::int64_t DataLoader::items_in(std::int64_t first, std::int64_t last) const {
    // Rank r's position i is position i·N + r of the padded permutation (which
    // repeats the permutation from its start): the ranks' batches [first, last)
    // together are positions [first·B·N, end·N) of it.
    const std::int64_t n = static_cast<std::int64_t>(permutation_.size());
    const std::int64_t begin = first * batch_size_ * world_size_;
    const std::int64_t end = std::min(last * batch_size_, samples()) * world_size_;
    std::int64_t items = 0;
    for (std::int64_t p = begin; p < end && n > 0; ++p)
        items += dataset_->items_per_sample[static_cast<std::size_t>(permutation_[static_cast<std::size_t>(p % n)])];
    return items;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
