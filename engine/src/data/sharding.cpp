#include "data/sharding.h"

#include <stdexcept>
#include <string>

namespace accum {

std::int64_t shard_length(std::int64_t n, int world_size) {
    if (world_size < 1) throw std::invalid_argument("shard: world size must be at least 1");
    return n <= 0 ? 0 : (n + world_size - 1) / world_size;
}

std::vector<std::int64_t> shard(const std::vector<std::int64_t>& order, int rank, int world_size) {
    if (world_size < 1) throw std::invalid_argument("shard: world size must be at least 1");
    if (rank < 0 || rank >= world_size)
        throw std::invalid_argument("shard: rank " + std::to_string(rank) + " is not in 0 … " +
                                    std::to_string(world_size - 1));
    const auto n = static_cast<std::int64_t>(order.size());
    const std::int64_t length = shard_length(n, world_size);
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(length));
    // Position p of the padded order is order[p % n]: DistributedSampler pads
    // with indices[:padding], or with the order repeated when the padding is
    // longer than the order itself, which is the same cycle.
    for (std::int64_t i = 0; i < length; ++i) {
        const std::int64_t position = rank + i * world_size;
        out.push_back(order[static_cast<std::size_t>(position % n)]);
    }
    return out;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
