// Kernels for a stack of fully connected layers on the CPU, without LibTorch.
//
// The activations travel transposed and in panels: for each block of 16 batch
// items, a [features × 16] panel, contiguous ("panel layout"; the last panel is
// zero-padded). A layer's product then reads its weight matrix as stored
// (row-major, out × in) and never packs it — the cost a BLAS pays on every call,
// once per micro-batch under gradient accumulation — and streams its other
// factor one contiguous panel at a time. Each function has an AVX2+FMA build
// chosen at run time and a portable one (cpu_kernels.cpp).
//
// Every product works on the rows [row_begin, row_end) of its output, so a
// caller can split the rows between threads; row_begin is a multiple of
// kRowBlock.
#pragma once

#include <cstdint>

namespace accum::dense {

inline constexpr std::int64_t kRowBlock = 6;  // output rows per register block
inline constexpr std::int64_t kPanel = 16;    // batch items per panel

// Floats in the panel layout of m items with `features` features each.
inline std::int64_t panel_size(std::int64_t m, std::int64_t features) {
    return (m + kPanel - 1) / kPanel * kPanel * features;
}

// x (m × k, row-major, stride ldx) → xᵀ in panel layout, the padding zero.
void to_panels(std::int64_t m, std::int64_t k, const float* x, std::int64_t ldx, float* xt);

// xᵀ in panel layout → x (m × k, contiguous): the first m items.
void from_panels(std::int64_t m, std::int64_t k, const float* xt, float* x);

// yᵀ = act(W xᵀ + b), in panel layout: W n × k (row-major), xᵀ of m items with k
// features, b n floats; act is ReLU when relu, the identity otherwise. Rows: n.
void forward(std::int64_t n, std::int64_t k, std::int64_t m, const float* w, const float* xt, const float* bias,
             bool relu, float* yt, std::int64_t row_begin, std::int64_t row_end);

// The same product from x as it comes (m × k, row-major, contiguous), without
// turning all of it into panels first: one panel at a time in a scratch buffer.
void forward_rows(std::int64_t n, std::int64_t k, std::int64_t m, const float* w, const float* x, const float* bias,
                  bool relu, float* yt, std::int64_t row_begin, std::int64_t row_end);

// dxᵀ = (Wᵀ gᵀ) ∘ [hᵀ > 0], in panel layout: W n × k, gᵀ with n features, hᵀ
// with k, the layer's input after its ReLU (nullptr: no mask). Rows: k.
void backward_input(std::int64_t n, std::int64_t k, std::int64_t m, const float* w, const float* gt,
                    const float* ht, float* dxt, std::int64_t row_begin, std::int64_t row_end);

// dW (n × k) = gᵀ x over the m items, or dW += gᵀ x when accumulate: gᵀ in panel
// layout with n features, x m × k row-major with stride ldx. Rows: n. With
// `squares`, also Σ dW² over the rows written (the values dW holds after the
// write), taken as they are stored: no second pass over dW.
void backward_weight(std::int64_t n, std::int64_t k, std::int64_t m, const float* gt, const float* x,
                     std::int64_t ldx, float* dw, bool accumulate, std::int64_t row_begin, std::int64_t row_end,
                     double* squares = nullptr);

// db (n) = the sum of gᵀ's n features over the m items (db += it when accumulate).
void backward_bias(std::int64_t n, std::int64_t m, const float* gt, float* db, bool accumulate);

// Σ x² over n floats, in double across blocks (no float lane sums more than a
// few hundred terms).
double sum_of_squares(const float* x, std::int64_t n);

} // namespace accum::dense
// SPDX-License-Identifier: GPL-3.0-or-later
