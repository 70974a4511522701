// A stack of fully connected layers with a ReLU after each but the last, trained
// as one operator on the CPU (dense_kernels.h), with a hand-written backward.
//
// Eager LibTorch runs such a stack as about fifteen operators and autograd nodes
// per micro-batch, and its BLAS packs each weight matrix on every call. Under
// gradient accumulation that fixed cost is paid K times per optimizer step:
// micro-batches of 64 ran at 0.79× the samples/s of one batch of 256 (bench/).
// Here one node computes the whole forward and backward and the weights are read
// as stored. The gradients go back through autograd like any operator's, so
// backward(), autograd::grad and hooks behave as with nn::Linear.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace accum {

// Whether the fused stack is switched on: ACCUM_FUSED_MLP=0 in the environment
// turns it off, for side-by-side measurements.
bool fused_dense_enabled();

// Whether fused_dense can serve this call: a 2-D float32 input and float32
// parameters, all on the CPU.
bool fused_dense_available(const at::Tensor& input, const std::vector<at::Tensor>& params);

// While one is alive, fused_dense's backward on this thread adds each
// parameter's gradient straight into the parameter's .grad, as the weight
// gradient's product is computed, instead of returning it for autograd's
// AccumulateGrad to add: under gradient accumulation that saves a pass over
// every weight, and a temporary as large, per micro-batch. A training loop sets
// it around its backward() calls; nothing else may expect the parameters'
// gradients to come out of the graph (autograd::grad with them as inputs,
// hooks on them). Without it the gradients go back through autograd.
class GradientsInPlace {
public:
    GradientsInPlace();
    ~GradientsInPlace();
    GradientsInPlace(const GradientsInPlace&) = delete;
    GradientsInPlace& operator=(const GradientsInPlace&) = delete;

private:
    bool previous_;
};

// input [m, k₀]; params W₀, b₀, W₁, b₁, … in nn::Linear's layout (Wᵢ [nᵢ, kᵢ],
// kᵢ₊₁ = nᵢ). Returns [m, n_last].
at::Tensor fused_dense(const at::Tensor& input, const std::vector<at::Tensor>& params);

} // namespace accum
