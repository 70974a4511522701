#include "kernels/fused_dense.h"

#include <algorithm>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/custom_function.h>

#include "kernels/dense_kernels.h"

namespace accum {

namespace {

// Runs fn(row_begin, row_end) over the rows of an output, split between
// LibTorch's intra-op threads when each share holds enough work (multiply-adds
// per row) to pay for it. One share per thread, of nearly equal size (boundaries
// at the row block nearest to an even split): splitting whole blocks in
// parallel_for's chunks gave one thread 132 of 256 rows and the other 124, and
// every region waited for the larger share.
template <class Fn>
void for_rows(std::int64_t rows, std::int64_t work_per_row, const Fn& fn) {
    constexpr std::int64_t min_work = 1 << 18; // about 10 µs of multiply-adds
    const auto blocks = (rows + dense::kRowBlock - 1) / dense::kRowBlock;
    const auto grain = std::max<std::int64_t>(1, min_work / std::max<std::int64_t>(1, work_per_row * dense::kRowBlock));
    const auto shares = std::min<std::int64_t>(at::get_num_threads(), blocks / grain);
    if (shares <= 1) return fn(0, rows);
    const auto first_row = [&](std::int64_t share) {
        if (share == shares) return rows;
        return (rows * share / shares + dense::kRowBlock / 2) / dense::kRowBlock * dense::kRowBlock;
    };
    at::parallel_for(0, shares, 1, [&](std::int64_t begin, std::int64_t end) {
        for (auto share = begin; share < end; ++share) fn(first_row(share), first_row(share + 1));
    });
}

// m × features (contiguous) → the panel layout of dense_kernels.h.
at::Tensor to_panels(const at::Tensor& rows) {
    const auto m = rows.size(0), features = rows.size(1);
    auto out = at::empty({dense::panel_size(m, features)}, rows.options());
    dense::to_panels(m, features, rows.data_ptr<float>(), features, out.data_ptr<float>());
    return out;
}

// The panel layout of m items → m × features.
at::Tensor from_panels(const at::Tensor& panels, std::int64_t m, std::int64_t features) {
    auto out = at::empty({m, features}, panels.options());
    dense::from_panels(m, features, panels.data_ptr<float>(), out.data_ptr<float>());
    return out;
}

// Where the backward writes a parameter's gradient.
struct GradientTarget {
    at::Tensor tensor;
    bool accumulate; // add to what the tensor holds
};

// The parameter's own .grad when the call asked for gradients in place and
// autograd would only add the gradient into it: no graph of the backward is being built, the
// parameter is a leaf and its .grad is undefined (created here, as
// AccumulateGrad would) or a plain contiguous float tensor of its shape. The
// backward then returns no gradient for it. Otherwise a new tensor, returned in
// `returned` for autograd to accumulate.
GradientTarget gradient_of(const at::Tensor& param, bool in_place, at::Tensor& returned) {
    if (in_place && !at::GradMode::is_enabled() && param.is_leaf()) {
        auto& grad = param.mutable_grad();
        if (!grad.defined()) {
            grad = at::empty(param.sizes(), param.options());
            return {grad, false};
        }
        if (!grad.requires_grad() && grad.layout() == at::kStrided && grad.is_contiguous() &&
            grad.scalar_type() == at::kFloat && grad.device() == param.device() && grad.sizes() == param.sizes())
            return {grad, true};
    }
    returned = at::empty(param.sizes(), param.options());
    return {returned, false};
}

class FusedDense final : public torch::autograd::Function<FusedDense> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input_in,
                              at::TensorList params_in, bool gradients_in_place) {
        const auto input = input_in.contiguous();
        const auto m = input.size(0);
        const auto layers = static_cast<std::int64_t>(params_in.size() / 2);
        std::vector<at::Tensor> params;
        for (const auto& p : params_in) params.push_back(p.contiguous());
        // to_save: the input, each layer's transposed input, then the parameters
        // (1 + 3 · layers tensors).
        std::vector<at::Tensor> to_save{input};
        at::Tensor ht; // the layer's input in panel layout; layer 0 reads the input as it is
        for (std::int64_t l = 0; l < layers; ++l) {
            const auto& w = params[2 * l];
            const auto& b = params[2 * l + 1];
            const auto n = w.size(0), k = w.size(1);
            const bool relu = l + 1 < layers;
            auto yt = at::empty({dense::panel_size(m, n)}, input.options());
            for_rows(n, k * m, [&](std::int64_t begin, std::int64_t end) {
                if (l == 0)
                    dense::forward_rows(n, k, m, w.data_ptr<float>(), input.data_ptr<float>(), b.data_ptr<float>(),
                                        relu, yt.data_ptr<float>(), begin, end);
                else
                    dense::forward(n, k, m, w.data_ptr<float>(), ht.data_ptr<float>(), b.data_ptr<float>(), relu,
                                   yt.data_ptr<float>(), begin, end);
            });
            to_save.push_back(ht);
            ht = yt;
        }
        to_save.insert(to_save.end(), params_in.begin(), params_in.end());
        ctx->save_for_backward(to_save);
        ctx->saved_data["in_place"] = gradients_in_place;
        return from_panels(ht, m, params.back().size(0));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto layers = static_cast<std::int64_t>(saved.size() - 1) / 3; // see to_save
        const auto& input = saved[0];
        const bool in_place = ctx->saved_data["in_place"].toBool();
        const auto m = input.size(0);
        auto gt = to_panels(grads[0].contiguous());
        torch::autograd::variable_list grads_out(2 + 2 * layers); // the input's, W₀, b₀, W₁, …, the flag's
        for (auto l = layers - 1; l >= 0; --l) {
            const auto& ht = saved[1 + l]; // the layer's input, transposed (after the ReLU below it)
            const auto& w_param = saved[1 + layers + 2 * l];
            const auto& b_param = saved[1 + layers + 2 * l + 1];
            const auto w = w_param.contiguous();
            const auto n = w.size(0), k = w.size(1);
            if (w_param.requires_grad()) {
                const auto x = l == 0 ? input : from_panels(ht, m, k);
                auto dw = gradient_of(w_param, in_place, grads_out[1 + 2 * l]);
                for_rows(n, k * m, [&](std::int64_t begin, std::int64_t end) {
                    dense::backward_weight(n, k, m, gt.data_ptr<float>(), x.data_ptr<float>(), k,
                                           dw.tensor.data_ptr<float>(), dw.accumulate, begin, end);
                });
            }
            if (b_param.requires_grad()) {
                auto db = gradient_of(b_param, in_place, grads_out[2 + 2 * l]);
                dense::backward_bias(n, m, gt.data_ptr<float>(), db.tensor.data_ptr<float>(), db.accumulate);
            }
            if (l == 0 && !input.requires_grad()) break;
            auto dxt = at::empty({dense::panel_size(m, k)}, gt.options());
            const float* mask = l == 0 ? nullptr : ht.data_ptr<float>();
            for_rows(k, n * m, [&](std::int64_t begin, std::int64_t end) {
                dense::backward_input(n, k, m, w.data_ptr<float>(), gt.data_ptr<float>(), mask,
                                      dxt.data_ptr<float>(), begin, end);
            });
            gt = dxt;
        }
        if (input.requires_grad()) grads_out[0] = from_panels(gt, m, input.size(1));
        return grads_out;
    }
};

} // namespace

bool fused_dense_available(const at::Tensor& input, const std::vector<at::Tensor>& params) {
    if (input.dim() != 2 || !input.device().is_cpu() || input.scalar_type() != at::kFloat) return false;
    return std::all_of(params.begin(), params.end(),
                       [](const at::Tensor& p) { return p.device().is_cpu() && p.scalar_type() == at::kFloat; });
}

at::Tensor fused_dense(const at::Tensor& input, const std::vector<at::Tensor>& params, bool gradients_in_place) {
    return FusedDense::apply(input, at::TensorList(params), gradients_in_place);
}

} // namespace accum
