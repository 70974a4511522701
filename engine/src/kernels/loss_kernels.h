// The softmax cross-entropy on the CPU, without LibTorch: the loss of each row
// of logits against its label, and the gradient, in one pass each. Each function
// has an AVX2+FMA build chosen at run time and a portable one (cpu_kernels.cpp),
// and works on the rows [row_begin, row_end), so a caller can split the rows
// between threads.
#pragma once

#include <cstdint>

namespace accum::loss {

// For each row i of x (classes floats per row, contiguous): lse[i] = log Σⱼ
// exp(x[i][j]) and loss[i] = lse[i] − x[i][labels[i]], or 0 where labels[i] is
// ignore_index. Every other label must lie in [0, classes).
void cross_entropy_forward(std::int64_t classes, const float* x, const std::int64_t* labels,
                           std::int64_t ignore_index, float* lse, float* loss, std::int64_t row_begin,
                           std::int64_t row_end);

// dx[i][j] = scale · (exp(x[i][j] − lse[i]) − [j = labels[i]]), and 0 on the rows
// whose label is ignore_index.
void cross_entropy_backward(std::int64_t classes, const float* x, const std::int64_t* labels,
                            std::int64_t ignore_index, const float* lse, float scale, float* dx,
                            std::int64_t row_begin, std::int64_t row_end);

} // namespace accum::loss
// SPDX-License-Identifier: GPL-3.0-or-later
