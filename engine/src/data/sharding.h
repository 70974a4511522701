#pragma once
// Which samples of an epoch each rank trains on, as PyTorch's
// DistributedSampler(drop_last=False) shares them out: the epoch's order is
// padded to ceil(n / N) · N by repeating it from the start, and rank r takes
// positions r, r + N, r + 2N, … . Every rank gets the same number of samples, so
// every rank runs as many micro-batches and syncs as often; and the j-th
// micro-batches of the N ranks together hold the same samples as the j-th
// micro-batch of one rank with an N-times larger micro-batch. Torch-free.

#include <cstdint>
#include <vector>

namespace accum {

// ceil(n / world_size): the samples every rank gets (0 when n is 0).
std::int64_t shard_length(std::int64_t n, int world_size);

// The indices rank `rank` of `world_size` trains on this epoch, in order, taken
// from `order` (the epoch's permutation of the sample indices). Throws
// std::invalid_argument when world_size < 1 or rank is not in 0 … world_size - 1.
std::vector<std::int64_t> shard(const std::vector<std::int64_t>& order, int rank, int world_size);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
