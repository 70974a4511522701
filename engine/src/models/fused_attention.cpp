#include "models/fused_attention.h"

#include <cstdlib>
#include <string_view>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/custom_function.h>

#include "models/attention_kernels.h"

namespace accum {

namespace {

struct Shape {
    std::int64_t batch, tokens, width, heads, head_width;
    std::int64_t bias_rows; // 1 (same bias for every query) or tokens (causal)
};

Shape shape_of(const at::Tensor& qkv, const at::Tensor& bias, std::int64_t heads) {
    const auto width = qkv.size(2) / 3;
    return {qkv.size(0), qkv.size(1), width, heads, width / heads, bias.size(2)};
}

class FusedAttention final : public torch::autograd::Function<FusedAttention> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& qkv_in,
                              const at::Tensor& bias_in, std::int64_t heads, double scale) {
        const auto qkv = qkv_in.contiguous();
        const auto bias = bias_in.contiguous();
        const auto s = shape_of(qkv, bias, heads);
        const auto t = s.tokens, hw = s.head_width, ld_qkv = 3 * s.width;
        auto context = at::empty({s.batch, t, s.width}, qkv.options());
        auto probs = at::empty({s.batch, heads, t, t}, qkv.options());
        const float* in = qkv.data_ptr<float>();
        const float* bias_data = bias.data_ptr<float>();
        float* out = context.data_ptr<float>();
        float* p_all = probs.data_ptr<float>();
        const auto bias_stride = bias.size(0) == 1 ? 0 : s.bias_rows * t;
        const attention::Tile tile{t, hw, ld_qkv, s.width, float(scale)};
        at::parallel_for(0, s.batch * heads, 1, [&](std::int64_t begin, std::int64_t end) {
            std::vector<float> scratch(std::size_t(hw * t));
            for (auto bh = begin; bh < end; ++bh) {
                const auto b = bh / heads, h = bh % heads;
                const float* q = in + b * t * ld_qkv + h * hw;
                attention::forward(tile, q, q + s.width, q + 2 * s.width, bias_data + b * bias_stride, s.bias_rows,
                                   p_all + bh * t * t, out + b * t * s.width + h * hw, scratch.data());
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
        const auto scale = float(ctx->saved_data["scale"].toDouble());
        const auto grad = grads[0].contiguous();
        const Shape s{qkv.size(0), qkv.size(1), qkv.size(2) / 3, heads, qkv.size(2) / 3 / heads, /*bias_rows=*/1};
        const auto t = s.tokens, hw = s.head_width, ld_qkv = 3 * s.width;
        auto grad_qkv = at::empty_like(qkv);
        const float* in = qkv.data_ptr<float>();
        const float* p_all = probs.data_ptr<float>();
        const float* g_all = grad.data_ptr<float>();
        float* d_all = grad_qkv.data_ptr<float>();
        const attention::Tile tile{t, hw, ld_qkv, s.width, scale};
        at::parallel_for(0, s.batch * heads, 1, [&](std::int64_t begin, std::int64_t end) {
            std::vector<float> scratch(std::size_t(t * t + hw * t));
            for (auto bh = begin; bh < end; ++bh) {
                const auto b = bh / heads, h = bh % heads;
                const auto offset = b * t * ld_qkv + h * hw;
                const float* q = in + offset;
                float* dq = d_all + offset;
                attention::backward(tile, q, q + s.width, q + 2 * s.width, p_all + bh * t * t,
                                    g_all + b * t * s.width + h * hw, dq, dq + s.width, dq + 2 * s.width,
                                    scratch.data());
            }
        });
        return {grad_qkv, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

} // namespace

bool fused_attention_available(const at::Tensor& qkv, bool attention_dropout) {
    // ACCUM_FUSED_ATTENTION=0 keeps the operator-by-operator path (for benchmarks and tests).
    static const bool enabled = [] {
        const char* value = std::getenv("ACCUM_FUSED_ATTENTION");
        return value == nullptr || std::string_view(value) != "0";
    }();
    return enabled && !attention_dropout && qkv.device().is_cpu() && qkv.scalar_type() == at::kFloat &&
           qkv.dim() == 3 && qkv.size(2) % 3 == 0;
}

at::Tensor fused_attention(const at::Tensor& qkv, const at::Tensor& bias, std::int64_t heads, double scale) {
    return FusedAttention::apply(qkv, bias, heads, scale);
}

} // namespace accum
