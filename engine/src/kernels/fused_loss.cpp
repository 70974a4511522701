#include "kernels/fused_loss.h"

#include <algorithm>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include "kernels/loss_kernels.h"

namespace accum {

namespace {

// Runs fn(row_begin, row_end) over the rows, split between LibTorch's intra-op
// threads once a share holds about 32k logits.
template <class Fn>
void for_rows(std::int64_t rows, std::int64_t classes, const Fn& fn) {
    const auto grain = std::max<std::int64_t>(1, (std::int64_t{1} << 15) / std::max<std::int64_t>(1, classes));
    at::parallel_for(0, rows, grain, fn);
}

// Two outputs from one node: the sum, and the sum divided by a fixed number (the
// micro-batch's label items: the mean). A model's forward returns both, and the
// mean as a second output rather than a division saves every micro-batch an
// operator and an autograd node (their cost: bench/step_breakdown.cpp).
class FusedCrossEntropy final : public torch::autograd::Function<FusedCrossEntropy> {
public:
    static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits_in,
                                                  const at::Tensor& labels_in, std::int64_t ignore_index,
                                                  double divisor) {
        const auto logits = logits_in.contiguous();
        const auto labels = labels_in.contiguous();
        const auto rows = logits.size(0), classes = logits.size(1);
        const auto* label = labels.data_ptr<std::int64_t>();
        for (std::int64_t i = 0; i < rows; ++i)
            TORCH_CHECK_INDEX(label[i] == ignore_index || (label[i] >= 0 && label[i] < classes), "Target ", label[i],
                              " is out of bounds.");
        auto lse = at::empty({rows}, logits.options());
        std::vector<float> loss(static_cast<std::size_t>(rows));
        for_rows(rows, classes, [&](std::int64_t begin, std::int64_t end) {
            loss::cross_entropy_forward(classes, logits.data_ptr<float>(), label, ignore_index, lse.data_ptr<float>(),
                                        loss.data(), begin, end);
        });
        double sum = 0.0; // in row order whatever the threads, so the loss is the same on any --threads
        for (const float l : loss) sum += l;
        ctx->save_for_backward({logits, labels, lse});
        ctx->saved_data["ignore_index"] = ignore_index;
        ctx->saved_data["divisor"] = divisor;
        ctx->set_materialize_grads(false); // an output nobody differentiates gets no zero tensor
        // The mean as LibTorch's division of the float sum would give it.
        return {at::scalar_tensor(sum, logits.options()),
                at::scalar_tensor(static_cast<double>(static_cast<float>(sum)) / divisor, logits.options())};
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto& logits = saved[0];
        const auto& labels = saved[1];
        const auto& lse = saved[2];
        const auto ignore_index = ctx->saved_data["ignore_index"].toInt();
        const auto divisor = ctx->saved_data["divisor"].toDouble();
        const auto rows = logits.size(0), classes = logits.size(1);
        // d/dlogits of (g_sum · sum + g_mean · sum / divisor). The incoming
        // gradients are 0-dim float tensors on the CPU: read, not dispatched.
        auto value = [](const at::Tensor& g) { return g.defined() ? double(*g.data_ptr<float>()) : 0.0; };
        const auto scale = static_cast<float>(value(grads[0]) + value(grads[1]) / divisor);
        auto dx = at::empty_like(logits);
        for_rows(rows, classes, [&](std::int64_t begin, std::int64_t end) {
            loss::cross_entropy_backward(classes, logits.data_ptr<float>(), labels.data_ptr<std::int64_t>(),
                                         ignore_index, lse.data_ptr<float>(), scale, dx.data_ptr<float>(), begin,
                                         end);
        });
        return {dx, at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

} // namespace

bool fused_cross_entropy_available(const at::Tensor& logits, const at::Tensor& labels) {
    return logits.dim() == 2 && logits.size(1) > 0 && labels.dim() == 1 &&
           labels.size(0) == logits.size(0) && logits.device().is_cpu() && labels.device().is_cpu() &&
           logits.scalar_type() == at::kFloat && labels.scalar_type() == at::kLong;
}

at::Tensor fused_cross_entropy_sum(const at::Tensor& logits, const at::Tensor& labels, std::int64_t ignore_index) {
    return FusedCrossEntropy::apply(logits, labels, ignore_index, 1.0)[0];
}

std::pair<at::Tensor, at::Tensor> fused_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                                      std::int64_t ignore_index, double divisor) {
    auto out = FusedCrossEntropy::apply(logits, labels, ignore_index, divisor);
    return {out[0], out[1]};
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
