#pragma once
// The engine's hand-written CPU kernels behind one interface: the models call a
// KernelSet and never name a kernel. A run chooses the fused operators of this
// folder or LibTorch's own with --cpu-kernels fused|aten; each operation below
// falls back to LibTorch's operators wherever a fused one cannot serve (another
// device or dtype, autocast, attention dropout), so both choices compute the same
// function and differ only in speed (tests/engine/test_kernels.cpp).

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "accum/run_config.h"

namespace accum {

class KernelSet {
public:
    // `gradients_in_place`: the fused dense stack adds its parameters' gradients
    // straight into their .grad (fused_dense.h). A training run asks for it; a
    // caller that takes gradients out of the graph (autograd::grad) must not.
    explicit KernelSet(CpuKernels choice = CpuKernels::Fused, bool gradients_in_place = false)
        : choice_(choice), gradients_in_place_(gradients_in_place) {}

    CpuKernels choice() const { return choice_; }

    // A stack of Linear layers with a ReLU after each but the last, over params
    // W₀, b₀, W₁, b₁, … in nn::Linear's layout. `operators` computes the same with
    // LibTorch modules; it runs wherever the fused stack cannot.
    at::Tensor dense_stack(const at::Tensor& input, const std::vector<at::Tensor>& params,
                           const std::function<at::Tensor(const at::Tensor&)>& operators) const;

    // softmax(scale · Q Kᵀ + bias) V for each head of the packed projection qkv
    // [B, T, 3·D]; bias [B, 1, 1, T] or [B, 1, T, T] takes no gradient. Returns the
    // context [B, T, D]. `operators` computes the same with LibTorch's operators
    // (and applies attention dropout); it runs wherever the fused attention cannot.
    at::Tensor attention(const at::Tensor& qkv, const at::Tensor& bias, std::int64_t heads, double scale,
                         bool attention_dropout, const std::function<at::Tensor()>& operators) const;

    // Softmax cross-entropy over label items (labels equal to ignore_index do not
    // count): their sum, and the sum divided by `items`. Always in fp32, as
    // autocast computes it: bf16/fp16 logits are cast up first, and the fused
    // loss serves under autocast too.
    struct CrossEntropy {
        at::Tensor sum;
        at::Tensor mean;
    };
    CrossEntropy cross_entropy(const at::Tensor& logits, const at::Tensor& labels, std::int64_t ignore_index,
                               double items) const;

    // A 2-D convolution with stride 1 and no dilation or groups (padding `padding`
    // on each side). With few input channels (an image's, up to 4) it runs as
    // LibTorch's im2col + GEMM convolution (thnn_conv2d) rather than oneDNN's,
    // which is much slower there (bench/MEMORY_LEVERS.md); `operators` (the
    // module's own forward) runs everywhere else.
    at::Tensor conv2d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, std::int64_t padding,
                      const std::function<at::Tensor(const at::Tensor&)>& operators) const;

    // max_pool2d(relu(input), 2) over [N, C, H, W], saving for backward only the
    // pooled output and a byte of argmax per window (fused_pool.h). `operators`
    // computes the same with LibTorch's (ReLU, then MaxPool2d(2)).
    at::Tensor relu_max_pool(const at::Tensor& input, const std::function<at::Tensor(const at::Tensor&)>& operators) const;
    // Whether relu_max_pool serves `input` with the fused kernel (saving the
    // pooled output and a byte per window) rather than with LibTorch's operators
    // (saving the ReLU's output and int64 indices).
    bool fuses_relu_max_pool(const at::Tensor& input) const;

private:
    bool fused() const;
    CpuKernels choice_;
    bool gradients_in_place_;
};

// Whether the configured model has a Linear-ReLU stack that trains as one fused
// operator: the MLP without BatchNorm or dropout, with --cpu-kernels fused; in
// fp32 (fused_dense) or, on the CPU under bf16 autocast, in bf16 as autocast's
// Linear layers compute it (fused_dense_bf16; fp16 autocast, CUDA only, runs
// LibTorch's Linear layers).
bool dense_stack_trains_fused(const RunConfig& config);

// Threads for one run, chosen in one place by the device, the model and the
// kernels (measured on a 2-core machine, bench/RESULTS.md):
//  - the CNN, and the MLP whose stack trains fused: LibTorch's intra-op pool on
//    all cores (up to 4), one OpenBLAS thread (the fused stack calls no BLAS; for
//    the CNN a second BLAS pool beside the intra-op pool oversubscribed the cores);
//    the MLP in bf16 too (its bf16 matrix products run on oneDNN in the intra-op
//    pool: 2/1 threads was its fastest, bench/AMP_RESULTS.md);
//  - the MLP as LibTorch operators: one intra-op thread and OpenBLAS on all cores
//    (its GEMMs are its whole cost; two pools oversubscribed the cores);
//  - the transformer: one of each;
//  - a user's module (--model FILE.pt): LibTorch's own default, the physical
//    cores, as eager PyTorch trains it, up to `cores` and without the cap of 4
//    (bench/OWN_MODEL_THREADS.md);
//  - on CUDA: the intra-op pool on all cores (up to 4) for the batches' gathering.
// `cores` is the share of the machine this process may use. --threads N gives the
// run N cores, split the same way (the transformer: N intra-op threads, one BLAS
// thread); setting both pools to N oversubscribes the cores with the CNN's
// per-image GEMMs (bench/RESULTS.md, "Figures quoted in the code").
struct ComputeThreads {
    int intra_op = 1;
    int blas = 1;
};
ComputeThreads choose_threads(const RunConfig& config, bool cuda, int cores);
// LibTorch's intra-op default as the process started (the physical cores it may
// use), read before any apply_threads.
int libtorch_default_threads();
// Sets LibTorch's intra-op pool and, where the process has OpenBLAS, its pool
// (OpenBLAS ignores LibTorch's setting and would take every core).
void apply_threads(const ComputeThreads& threads);
// What the last apply_threads set (one of each before any).
ComputeThreads applied_threads();

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
