// The fused ReLU + 2 × 2 max-pool's loops over rows (fused_pool.cpp), compiled
// for AVX2 and for the baseline instruction set in cpu_kernels.cpp.
#pragma once

#include <cstdint>

namespace accum::pool {

// Planes [begin, end) of an [N·C, h, w] input `x` (contiguous): writes each
// window's pooled value (relu of its maximum, the first maximum in row order
// winning, a NaN winning) to `out` [N·C, h/2, w/2] and its argmax (0 top-left,
// 1 top-right, 2 bottom-left, 3 bottom-right) to `argmax`.
void forward(std::int64_t begin, std::int64_t end, std::int64_t h, std::int64_t w, const float* x, float* out,
             std::uint8_t* argmax);

// The gradient of planes [begin, end): every element of `dx` [N·C, h, w] is
// written, the window's argmax getting g where the pooled value is positive,
// everything else (and an odd last row or column) 0.
void backward(std::int64_t begin, std::int64_t end, std::int64_t h, std::int64_t w, const float* pooled,
              const std::uint8_t* argmax, const float* g, float* dx);

} // namespace accum::pool
// SPDX-License-Identifier: GPL-3.0-or-later
