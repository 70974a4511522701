#include "kernels/fused_pool.h"

#include <cstdint>
#include <algorithm>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/custom_function.h>

#include "kernels/pool_kernels.h"

namespace accum {

namespace {

// Runs fn(plane_begin, plane_end) over the N·C planes, split between LibTorch's
// intra-op threads once a share holds about 64k input values.
template <class Fn>
void for_planes(std::int64_t planes, std::int64_t plane_size, const Fn& fn) {
    const auto grain = std::max<std::int64_t>(1, (std::int64_t{1} << 16) / std::max<std::int64_t>(1, plane_size));
    at::parallel_for(0, planes, grain, fn);
}

class ReluMaxPool final : public torch::autograd::Function<ReluMaxPool> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input_in) {
        const auto input = input_in.contiguous();
        const auto n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
        const auto oh = h / 2, ow = w / 2;
        auto out = at::empty({n, c, oh, ow}, input.options());
        auto where = at::empty({n, c, oh, ow}, input.options().dtype(at::kByte));
        const float* x = input.data_ptr<float>();
        float* y = out.data_ptr<float>();
        std::uint8_t* arg = where.data_ptr<std::uint8_t>();
        for_planes(n * c, h * w, [&](std::int64_t begin, std::int64_t end) { pool::forward(begin, end, h, w, x, y, arg); });
        ctx->save_for_backward({out, where});
        ctx->saved_data["h"] = h;
        ctx->saved_data["w"] = w;
        return out;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto& out = saved[0];
        const auto& where = saved[1];
        const auto grad = grads[0].contiguous();
        const auto h = ctx->saved_data["h"].toInt(), w = ctx->saved_data["w"].toInt();
        const auto n = out.size(0), c = out.size(1);
        auto dx = at::empty({n, c, h, w}, grad.options());
        const float* y = out.data_ptr<float>();
        const std::uint8_t* arg = where.data_ptr<std::uint8_t>();
        const float* g = grad.data_ptr<float>();
        float* d = dx.data_ptr<float>();
        // Every element is written once (no zero-fill pass first).
        for_planes(n * c, h * w, [&](std::int64_t begin, std::int64_t end) {
            pool::backward(begin, end, h, w, y, arg, g, d);
        });
        return {dx};
    }
};

} // namespace

bool relu_max_pool_available(const at::Tensor& input) {
    return input.defined() && input.dim() == 4 && input.device().is_cpu() && input.scalar_type() == at::kFloat &&
           input.size(2) >= 2 && input.size(3) >= 2 && input.layout() == at::kStrided;
}

at::Tensor relu_max_pool2x2(const at::Tensor& input) { return ReluMaxPool::apply(input); }

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
