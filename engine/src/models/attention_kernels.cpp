#include "models/attention_kernels.h"

#include <atomic>

namespace accum::attention {

namespace {

std::atomic<bool> portable_only{false};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ACCUM_ATTENTION_AVX2 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
#include "models/attention_kernels.inc"
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
#endif

namespace portable {
#include "models/attention_kernels.inc"
} // namespace portable

} // namespace

void forward(const Tile& tile, const float* q, const float* k, const float* v, const float* bias,
             std::int64_t bias_rows, float* p, float* out, float* scratch) {
#ifdef ACCUM_ATTENTION_AVX2
    if (has_avx2()) return avx2::forward_tile(tile, q, k, v, bias, bias_rows, p, out, scratch);
#endif
    portable::forward_tile(tile, q, k, v, bias, bias_rows, p, out, scratch);
}

void backward(const Tile& tile, const float* q, const float* k, const float* v, const float* p, const float* g,
              float* dq, float* dk, float* dv, float* scratch) {
#ifdef ACCUM_ATTENTION_AVX2
    if (has_avx2()) return avx2::backward_tile(tile, q, k, v, p, g, dq, dk, dv, scratch);
#endif
    portable::backward_tile(tile, q, k, v, p, g, dq, dk, dv, scratch);
}

void use_portable_kernels(bool portable) { portable_only = portable; }

} // namespace accum::attention
