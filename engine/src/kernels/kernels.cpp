#include "kernels/kernels.h"

#include <algorithm>
#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <ATen/ops/thnn_conv2d.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include "kernels/fused_attention.h"
#include "kernels/fused_dense.h"
#include "kernels/fused_loss.h"
#include "kernels/fused_pool.h"
#include "torch_compat.h"

namespace accum {

bool KernelSet::fused() const {
    // Under autocast the operators choose their own precision; the fused kernels
    // are float32 only and step aside.
    return choice_ == CpuKernels::Fused && !compat::autocast_enabled(c10::DeviceType::CPU);
}

at::Tensor KernelSet::dense_stack(const at::Tensor& input, const std::vector<at::Tensor>& params,
                                  const std::function<at::Tensor(const at::Tensor&)>& operators) const {
    if (fused() && fused_dense_available(input, params)) return fused_dense(input, params, gradients_in_place_);
    // Under bf16 autocast on the CPU, the same stack in bf16 as one node (fused_dense_bf16).
    if (choice_ == CpuKernels::Fused && input.device().is_cpu() && compat::autocast_enabled(c10::DeviceType::CPU) &&
        compat::autocast_dtype(c10::DeviceType::CPU) == at::kBFloat16 && fused_dense_available(input, params)) {
        const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCPU);
        return fused_dense_bf16(input, params, gradients_in_place_);
    }
    return operators(input);
}

at::Tensor KernelSet::attention(const at::Tensor& qkv, const at::Tensor& bias, std::int64_t heads, double scale,
                                bool attention_dropout, const std::function<at::Tensor()>& operators) const {
    if (fused() && fused_attention_available(qkv, attention_dropout)) return fused_attention(qkv, bias, heads, scale);
    return operators();
}

KernelSet::CrossEntropy KernelSet::cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                                 std::int64_t ignore_index, double items) const {
    // Autocast computes this loss in fp32 (cross_entropy is on its fp32 list, on
    // the CPU and CUDA): bf16 or fp16 logits are cast up first. Made here, the
    // same cast lets the fused fp32 loss serve under autocast too.
    // Under autocast the other fused kernels step aside and this loss is the
    // only one left: --cpu-kernels aten hands it to ATen too.
    if (choice_ == CpuKernels::Fused) {
        const bool lower = logits.scalar_type() == at::kBFloat16 || logits.scalar_type() == at::kHalf;
        const auto rows = lower && logits.device().is_cpu() ? logits.to(at::kFloat) : logits;
        if (fused_cross_entropy_available(rows, labels)) {
            auto [sum, mean] = fused_cross_entropy(rows, labels, ignore_index, items);
            return {sum, mean};
        }
    }
    namespace F = torch::nn::functional;
    auto sum = F::cross_entropy(logits, labels,
                                F::CrossEntropyFuncOptions().ignore_index(ignore_index).reduction(torch::kSum));
    auto mean = sum / items;
    return {sum, mean};
}

at::Tensor KernelSet::conv2d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                             std::int64_t padding,
                             const std::function<at::Tensor(const at::Tensor&)>& operators) const {
    constexpr std::int64_t kFewChannels = 4;
    if (fused() && input.device().is_cpu() && input.scalar_type() == at::kFloat && input.dim() == 4 &&
        weight.dim() == 4 && weight.scalar_type() == at::kFloat && input.size(1) == weight.size(1) &&
        input.size(1) <= kFewChannels)
        return at::thnn_conv2d(input, weight, {weight.size(2), weight.size(3)}, bias, {1, 1}, {padding, padding});
    return operators(input);
}

at::Tensor KernelSet::relu_max_pool(const at::Tensor& input,
                                    const std::function<at::Tensor(const at::Tensor&)>& operators) const {
    if (fuses_relu_max_pool(input)) return relu_max_pool2x2(input);
    // Under bf16 autocast the activations come in bf16, where ATen's max-pool is a
    // slow scalar loop (bench/RESULTS.md, "What limits each model"). ReLU and max are exact in any precision, so the fp32
    // kernel on the activations cast up, cast back, gives ATen's bf16 result bit
    // for bit, and its backward the same gradients.
    if (choice_ == CpuKernels::Fused && input.defined() && input.scalar_type() == at::kBFloat16 &&
        input.device().is_cpu())
        if (const auto up = input.to(at::kFloat); relu_max_pool_available(up))
            return relu_max_pool2x2(up).to(at::kBFloat16);
    return operators(input);
}

bool KernelSet::fuses_relu_max_pool(const at::Tensor& input) const { return fused() && relu_max_pool_available(input); }

bool dense_stack_trains_fused(const RunConfig& config) {
    return config.model == ModelKind::Mlp && !config.batch_norm && config.dropout <= 0 &&
           config.cpu_kernels == CpuKernels::Fused && config.mixed_precision != MixedPrecision::Fp16;
}

int libtorch_default_threads() {
    // Read once, before the first apply_threads changes it: LibTorch's own
    // default, the physical cores the process may use, as eager PyTorch has it.
    static const int count = std::max(1, at::get_num_threads());
    return count;
}

ComputeThreads choose_threads(const RunConfig& config, bool cuda, int cores) {
    const int own_default = libtorch_default_threads();
    const int all = config.threads > 0 ? config.threads : std::clamp(cores, 1, 4);
    ComputeThreads t;
    if (config.model == ModelKind::File && config.threads <= 0) {
        // A user's module: eager PyTorch's default, up to this process's share
        // of the machine, no cap; its own GEMMs and attention fill the pool.
        t.intra_op = std::clamp(own_default, 1, std::max(1, cores));
    } else if (cuda || config.model == ModelKind::Cnn || dense_stack_trains_fused(config) ||
        (config.model == ModelKind::Mlp && config.mixed_precision != MixedPrecision::No)) {
        t.intra_op = all;
    } else if (config.model == ModelKind::Mlp) {
        t.blas = all;
    } else if (config.threads > 0) {
        t.intra_op = all; // asked for (the built-in transformer's default is one of each)
    }
    return t;
}

namespace {
ComputeThreads applied; // the process's pools are process-wide, as this is
} // namespace

void apply_threads(const ComputeThreads& t) {
    applied = t;
    torch::set_num_threads(t.intra_op);
    using SetThreads = void (*)(int);
    if (auto* openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
        openblas(t.blas);
}

ComputeThreads applied_threads() { return applied; }

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
