// A stack of fully connected layers with a ReLU after each but the last, trained
// as one operator on the CPU (dense_kernels.h), with a hand-written backward.
//
// Eager LibTorch runs such a stack as about fifteen operators and autograd nodes
// per micro-batch, and its BLAS packs each weight matrix on every call. Under
// gradient accumulation that fixed cost is paid K times per optimizer step
// (bench/RESULTS.md, "Accumulation overhead").
// Here one node computes the whole forward and backward and the weights are read
// as stored. The gradients go back through autograd like any operator's, so
// backward(), autograd::grad and hooks behave as with nn::Linear.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace accum {

// Whether fused_dense can serve this call: a 2-D float32 input and float32
// parameters, all on the CPU.
bool fused_dense_available(const at::Tensor& input, const std::vector<at::Tensor>& params);

// input [m, k₀]; params W₀, b₀, W₁, b₁, … in nn::Linear's layout (Wᵢ [nᵢ, kᵢ],
// kᵢ₊₁ = nᵢ). Returns [m, n_last].
//
// With `gradients_in_place` the backward adds each parameter's gradient straight
// into the parameter's .grad, as the weight gradient's product is computed,
// instead of returning it for autograd's AccumulateGrad to add: under gradient
// accumulation that saves a pass over every weight, and a temporary as large, per
// micro-batch. Only for training loops that read gradients from .grad: nothing
// may expect the parameters' gradients to come out of the graph (autograd::grad
// with them as inputs, hooks on them). Where autograd builds a graph of the
// backward, or .grad is not a plain tensor of the parameter's shape, the gradient
// goes back through autograd as usual.
at::Tensor fused_dense(const at::Tensor& input, const std::vector<at::Tensor>& params, bool gradients_in_place);

// The same stack as bf16 autocast computes it (each Linear's input, weight and bias
// in bf16, a bf16 output, the ReLU in bf16), as one autograd node with the weights'
// bf16 copies kept while they are unchanged (across a window's micro-batches).
// Same conditions as fused_dense (fused_dense_available); returns bf16 [m, n_last];
// the gradients reach the float32 parameters as autocast's would.
at::Tensor fused_dense_bf16(const at::Tensor& input, const std::vector<at::Tensor>& params,
                            bool gradients_in_place);

// Parameters may have changed where their version counters do not see it (an
// optimizer step: LibTorch's C++ optimizers write through .data(); a run's start,
// after a checkpoint or the ranks' agreement wrote them): fused_dense_bf16 makes
// its weights' bf16 copies again at their next use. The optimizer step and the
// session call it.
void dense_weights_changed();

// Gradient notes: the squared norm of a weight's .grad as the float32 backward
// wrote it in place, summed as the values were stored, for a reader that would
// otherwise pass over every gradient again (the noise scale's meter, after a
// window's first backward). The backward notes only while armed: arming starts
// a new generation (notes written before are stale), so the reader arms just
// before the backward it wants and disarms after reading. A note holds while
// .grad is the same tensor at the same version: anything else that writes .grad
// (autograd's accumulation, zero_grad, clipping) moves its version or replaces it,
// and the fused backwards, which write it in place unversioned, end the notes'
// generation when they write it without noting.
void arm_gradient_notes(bool armed);
// The note of `param`'s .grad, or a negative value where none holds.
double noted_gradient_squares(const at::Tensor& param);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
