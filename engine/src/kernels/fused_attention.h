// Fused multi-head attention for the CPU: softmax(scale · Q Kᵀ + bias) V for every
// (sequence, head) in one pass that stays in cache, with a hand-written backward.
//
// Eager LibTorch runs the same maths as separate operators, each walking all heads,
// and splits each batched product into one dispatcher call per head; at the
// transformer's sizes (48 tokens, head width 16) that per-call overhead is most of
// the attention's time. Here every per-head product is a register-blocked loop
// over tiles that stay in L1 (attention_kernels.h).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace accum {

// Whether fused_attention can serve this call: float32 tensors on the CPU and no
// attention dropout.
bool fused_attention_available(const at::Tensor& qkv, bool attention_dropout);

// qkv: [B, T, 3·D], the packed query/key/value projection (heads interleaved as
// view(B, T, 3, heads, D/heads)). bias: [B, 1, 1, T] (key padding) or
// [B, 1, T, T] (padding plus causal), added to the scaled scores; it takes no
// gradient. Returns the context [B, T, D] with the heads concatenated.
at::Tensor fused_attention(const at::Tensor& qkv, const at::Tensor& bias, std::int64_t heads, double scale);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
