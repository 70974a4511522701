#include "kernels/fused_attention.h"

#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/custom_function.h>

#include "kernels/attention_kernels.h"

namespace accum {

namespace {

// The per-(sequence, head) tile of a packed [B, T, 3·D] projection: q, k and v of
// head h start at columns h·d, D + h·d and 2·D + h·d of each token's row.
attention::Tile tile_of(const at::Tensor& qkv, std::int64_t heads, float scale) {
    const auto width = qkv.size(2) / 3;
    return {qkv.size(1), width / heads, 3 * width, width, scale};
}

class FusedAttention final : public torch::autograd::Function<FusedAttention> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& qkv_in,
                              const at::Tensor& bias_in, std::int64_t heads, double scale) {
        const auto qkv = qkv_in.contiguous();
        const auto bias = bias_in.contiguous();
        const auto tile = tile_of(qkv, heads, float(scale));
        const auto batch = qkv.size(0), t = tile.tokens, width = tile.ld_out;
        const auto bias_rows = bias.size(2); // 1 (the same for every query) or T (causal)
        const auto bias_stride = bias.size(0) == 1 ? 0 : bias_rows * t;
        auto context = at::empty({batch, t, width}, qkv.options());
        auto probs = at::empty({batch, heads, t, t}, qkv.options());
        const float* in = qkv.data_ptr<float>();
        const float* bias_data = bias.data_ptr<float>();
        float* out = context.data_ptr<float>();
        float* p_all = probs.data_ptr<float>();
        at::parallel_for(0, batch * heads, 1, [&](std::int64_t begin, std::int64_t end) {
            std::vector<float> scratch(std::size_t(tile.head_width * t));
            for (auto bh = begin; bh < end; ++bh) {
                const auto b = bh / heads, h = bh % heads;
                const float* q = in + b * t * tile.ld_qkv + h * tile.head_width;
                attention::forward(tile, q, q + width, q + 2 * width, bias_data + b * bias_stride, bias_rows,
                                   p_all + bh * t * t, out + b * t * width + h * tile.head_width, scratch.data());
            }
        });
        ctx->save_for_backward({qkv, probs});
        ctx->saved_data["heads"] = heads;
        ctx->saved_data["scale"] = scale;
        return context;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto& qkv = saved[0];
        const auto& probs = saved[1];
        const auto heads = ctx->saved_data["heads"].toInt();
        const auto tile = tile_of(qkv, heads, float(ctx->saved_data["scale"].toDouble()));
        const auto t = tile.tokens, width = tile.ld_out;
        const auto grad = grads[0].contiguous();
        auto grad_qkv = at::empty_like(qkv);
        const float* in = qkv.data_ptr<float>();
        const float* p_all = probs.data_ptr<float>();
        const float* g_all = grad.data_ptr<float>();
        float* d_all = grad_qkv.data_ptr<float>();
        at::parallel_for(0, qkv.size(0) * heads, 1, [&](std::int64_t begin, std::int64_t end) {
            std::vector<float> scratch(std::size_t(t * t + tile.head_width * t));
            for (auto bh = begin; bh < end; ++bh) {
                const auto b = bh / heads, h = bh % heads;
                const auto offset = b * t * tile.ld_qkv + h * tile.head_width;
                const float* q = in + offset;
                float* dq = d_all + offset;
                attention::backward(tile, q, q + width, q + 2 * width, p_all + bh * t * t,
                                    g_all + b * t * width + h * tile.head_width, dq, dq + width, dq + 2 * width,
                                    scratch.data());
            }
        });
        return {grad_qkv, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

} // namespace

bool fused_attention_available(const at::Tensor& qkv, bool attention_dropout) {
    return !attention_dropout && qkv.device().is_cpu() && qkv.scalar_type() == at::kFloat &&
           qkv.dim() == 3 && qkv.size(2) % 3 == 0;
}

at::Tensor fused_attention(const at::Tensor& qkv, const at::Tensor& bias, std::int64_t heads, double scale) {
    return FusedAttention::apply(qkv, bias, heads, scale);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
