// Per-(sequence, head) attention tiles for the CPU, without LibTorch: the small
// products (tokens × head width) that eager attention hands to BLAS one head at a
// time, written as register-blocked loops that stay in the L1 cache. Each
// function has an AVX2+FMA build chosen at run time and a portable one
// (cpu_kernels.cpp).
#pragma once

#include <cstdint>

namespace accum::attention {

struct Tile {
    std::int64_t tokens;     // T
    std::int64_t head_width; // d, a multiple of 8
    std::int64_t ld_qkv;     // row stride of q, k, v (3·D in the packed projection)
    std::int64_t ld_out;     // row stride of the context and its gradient (D)
    float scale;             // applied to q kᵀ
};

// p (T×T) = softmax(scale · q kᵀ + bias), with bias one row (bias_rows 1) or T rows;
// out (T×d, stride ld_out) = p v. scratch holds at least d·T floats.
void forward(const Tile& tile, const float* q, const float* k, const float* v, const float* bias,
             std::int64_t bias_rows, float* p, float* out, float* scratch);

// Given p from forward and g = ∂loss/∂out, writes dq, dk, dv (stride ld_qkv).
// scratch holds at least T·T + d·T floats.
void backward(const Tile& tile, const float* q, const float* k, const float* v, const float* p, const float* g,
              float* dq, float* dk, float* dv, float* scratch);

} // namespace accum::attention
// SPDX-License-Identifier: GPL-3.0-or-later
