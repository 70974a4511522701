// The CPU kernels (attention_kernels.inc, dense_kernels.inc, loss_kernels.inc, pool_kernels.inc), each compiled twice:
// for AVX2+FMA, chosen at run time where the processor has it, and for the
// baseline instruction set.
#include "kernels/cpu_kernels.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/attention_kernels.h"
#include "kernels/dense_kernels.h"
#include "kernels/loss_kernels.h"
#include "kernels/pool_kernels.h"

namespace accum {

namespace {

std::atomic<bool> portable_only{false};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ACCUM_KERNELS_AVX2 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
using attention::Tile;
#include "kernels/simd.inc"
#include "kernels/dense_kernels.inc"
#include "kernels/attention_kernels.inc"
#include "kernels/loss_kernels.inc"
#include "kernels/pool_kernels.inc"
} // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes && !portable_only.load(std::memory_order_relaxed);
}
// Calls the AVX2+FMA build of a kernel where it can run, the portable one otherwise.
#define ACCUM_DISPATCH(call)                                                                                           \
    do {                                                                                                               \
        if (has_avx2()) return avx2::call;                                                                             \
        return portable::call;                                                                                         \
    } while (false)
#else
#define ACCUM_DISPATCH(call) return portable::call
#endif

namespace portable {
using attention::Tile;
#include "kernels/simd.inc"
#include "kernels/dense_kernels.inc"
#include "kernels/attention_kernels.inc"
#include "kernels/loss_kernels.inc"
#include "kernels/pool_kernels.inc"
} // namespace portable

} // namespace

void use_portable_kernels(bool portable) { portable_only = portable; }

namespace attention {

void forward(const Tile& tile, const float* q, const float* k, const float* v, const float* bias,
             std::int64_t bias_rows, float* p, float* out, float* scratch) {
    ACCUM_DISPATCH(forward_tile(tile, q, k, v, bias, bias_rows, p, out, scratch));
}

void backward(const Tile& tile, const float* q, const float* k, const float* v, const float* p, const float* g,
              float* dq, float* dk, float* dv, float* scratch) {
    ACCUM_DISPATCH(backward_tile(tile, q, k, v, p, g, dq, dk, dv, scratch));
}

} // namespace attention

namespace dense {

void to_panels(std::int64_t m, std::int64_t k, const float* x, std::int64_t ldx, float* xt) {
    ACCUM_DISPATCH(to_panels(m, k, x, ldx, xt));
}

void from_panels(std::int64_t m, std::int64_t k, const float* xt, float* x) { ACCUM_DISPATCH(from_panels(m, k, xt, x)); }

void forward(std::int64_t n, std::int64_t k, std::int64_t m, const float* w, const float* xt, const float* bias,
             bool relu, float* yt, std::int64_t row_begin, std::int64_t row_end) {
    ACCUM_DISPATCH(forward(n, k, m, w, xt, bias, relu, yt, row_begin, row_end));
}

void forward_rows(std::int64_t n, std::int64_t k, std::int64_t m, const float* w, const float* x, const float* bias,
                  bool relu, float* yt, std::int64_t row_begin, std::int64_t row_end) {
    ACCUM_DISPATCH(forward_rows(n, k, m, w, x, bias, relu, yt, row_begin, row_end));
}

void backward_input(std::int64_t n, std::int64_t k, std::int64_t m, const float* w, const float* gt,
                    const float* ht, float* dxt, std::int64_t row_begin, std::int64_t row_end) {
    ACCUM_DISPATCH(backward_input(n, k, m, w, gt, ht, dxt, row_begin, row_end));
}

void backward_weight(std::int64_t n, std::int64_t k, std::int64_t m, const float* gt, const float* x,
                     std::int64_t ldx, float* dw, bool accumulate, std::int64_t row_begin, std::int64_t row_end,
                     double* squares) {
    ACCUM_DISPATCH(backward_weight(n, k, m, gt, x, ldx, dw, accumulate, row_begin, row_end, squares));
}

void backward_bias(std::int64_t n, std::int64_t m, const float* gt, float* db, bool accumulate) {
    ACCUM_DISPATCH(backward_bias(n, m, gt, db, accumulate));
}

double sum_of_squares(const float* x, std::int64_t n) { ACCUM_DISPATCH(sum_of_squares(x, n)); }

} // namespace dense

namespace loss {

void cross_entropy_forward(std::int64_t classes, const float* x, const std::int64_t* labels,
                           std::int64_t ignore_index, float* lse, float* loss, std::int64_t row_begin,
                           std::int64_t row_end) {
    ACCUM_DISPATCH(cross_entropy_forward(classes, x, labels, ignore_index, lse, loss, row_begin, row_end));
}

void cross_entropy_backward(std::int64_t classes, const float* x, const std::int64_t* labels,
                            std::int64_t ignore_index, const float* lse, float scale, float* dx,
                            std::int64_t row_begin, std::int64_t row_end) {
    ACCUM_DISPATCH(cross_entropy_backward(classes, x, labels, ignore_index, lse, scale, dx, row_begin, row_end));
}

} // namespace loss

namespace pool {

void forward(std::int64_t begin, std::int64_t end, std::int64_t h, std::int64_t w, const float* x, float* out,
             std::uint8_t* argmax) {
    ACCUM_DISPATCH(pool_rows::forward(begin, end, h, w, x, out, argmax));
}

void backward(std::int64_t begin, std::int64_t end, std::int64_t h, std::int64_t w, const float* pooled,
              const std::uint8_t* argmax, const float* g, float* dx) {
    ACCUM_DISPATCH(pool_rows::backward(begin, end, h, w, pooled, argmax, g, dx));
}

} // namespace pool

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
