// The summed softmax cross-entropy as one autograd node on the CPU
// (loss_kernels.h), with a hand-written backward.
//
// LibTorch computes it as log_softmax and nll_loss, two operators and two
// autograd nodes whose backward allocates and scatters a one-hot gradient. For a
// micro-batch of 64 images that fixed cost is comparable to the MLP's own
// forward and backward, and gradient accumulation pays it K times per optimizer
// step. Here one node computes the loss and one pass its gradient.
#pragma once

#include <cstdint>
#include <utility>

#include <ATen/core/Tensor.h>

namespace accum {

// Whether fused_cross_entropy_sum can serve this call: float32 logits [N, C] and
// int64 labels [N], on the CPU.
bool fused_cross_entropy_available(const at::Tensor& logits, const at::Tensor& labels);

// Σᵢ −log softmax(logits[i])[labels[i]] over the rows whose label is not
// ignore_index, as a 0-dim tensor: F::cross_entropy with reduction sum. A label
// outside [0, C) is an error, as there.
at::Tensor fused_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& labels, std::int64_t ignore_index);

// The same sum and sum / divisor, two outputs of one node (divisor > 0).
std::pair<at::Tensor, at::Tensor> fused_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                                      std::int64_t ignore_index, double divisor);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
