// transformer: token + position embeddings, --transformer-layers (2) post-norm
// encoder layers (d = 64, 4 heads, feed-forward 128, ReLU, as
// nn.TransformerEncoderLayer's defaults), then a masked mean pool and a
// classifier, or a causal LM head. With --gradient-checkpointing each encoder
// layer is a checkpointed block (the fused attention runs inside it).
#include <cmath>

#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "models/gradient_checkpoint.h"
#include "models/model.h"

namespace accum {

namespace {

constexpr std::int64_t kModel = 64, kHeads = 4, kFeedForward = 128;

class EncoderLayer final : public torch::nn::Module {
public:
    EncoderLayer(double dropout, KernelSet kernels)
        : kernels_(kernels), qkv_(register_module("qkv", torch::nn::Linear(kModel, 3 * kModel))),
          out_(register_module("out", torch::nn::Linear(kModel, kModel))),
          ff1_(register_module("ff1", torch::nn::Linear(kModel, kFeedForward))),
          ff2_(register_module("ff2", torch::nn::Linear(kFeedForward, kModel))),
          norm1_(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))),
          norm2_(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))),
          dropout_(register_module("dropout", torch::nn::Dropout(dropout))) {}

    // x [B,T,D]; bias [B,1,T,T] or [B,1,1,T]: 0 where attention is allowed, -inf-ish where not.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias) {
        const auto b = x.size(0), t = x.size(1);
        const auto packed = qkv_->forward(x);
        const double scale = 1.0 / std::sqrt(double(kModel / kHeads));
        const bool attention_dropout = is_training() && dropout_->options.p() > 0.0;
        const auto context = kernels_.attention(packed, bias, kHeads, scale, attention_dropout, [&] {
            const auto qkv = packed.view({b, t, 3, kHeads, kModel / kHeads}).permute({2, 0, 3, 1, 4});
            const auto q = qkv[0], k = qkv[1], v = qkv[2];
            // bias + scale · q kᵀ in one fused batched GEMM (baddbmm) instead of matmul, mul and add.
            const auto heads = b * kHeads;
            const auto scores = torch::baddbmm(bias.expand({b, kHeads, t, t}).reshape({heads, t, t}),
                                               q.reshape({heads, t, kModel / kHeads}),
                                               k.reshape({heads, t, kModel / kHeads}).transpose(1, 2),
                                               /*beta=*/1.0, /*alpha=*/scale)
                                    .view({b, kHeads, t, t});
            auto attn = dropout_->forward(torch::softmax(scores, -1));
            return torch::matmul(attn, v).transpose(1, 2).reshape({b, t, kModel});
        });
        auto h = norm1_->forward(x + dropout_->forward(out_->forward(context)));
        auto ff = ff2_->forward(dropout_->forward(torch::relu(ff1_->forward(h))));
        return norm2_->forward(h + dropout_->forward(ff));
    }

private:
    KernelSet kernels_;
    torch::nn::Linear qkv_, out_, ff1_, ff2_;
    torch::nn::LayerNorm norm1_, norm2_;
    torch::nn::Dropout dropout_;
};

class Transformer final : public Model {
public:
    Transformer(const RunConfig& config, const TensorDataset& data, KernelSet kernels)
        : Model(kernels), causal_(data.task == Task::LanguageModeling) {
        tokens_ = register_module("tokens", torch::nn::Embedding(data.vocab_size, kModel));
        positions_ = register_module("positions", torch::nn::Embedding(data.max_length, kModel));
        for (int i = 0; i < config.transformer_layers; ++i)
            layers_.push_back(register_module("layer" + std::to_string(i),
                                              std::make_shared<EncoderLayer>(config.dropout, kernels)));
        head_ = register_module("head", torch::nn::Linear(kModel, data.num_classes));
        description_ = "transformer d64 x" + std::to_string(config.transformer_layers) + " layers, " +
                       (causal_ ? "causal LM head" : "classifier") +
                       " (" + std::to_string(data.num_classes) + " outputs)";
    }

    torch::Tensor logits(const Batch& batch) override {
        const auto& ids = batch.input_ids;
        const auto t = ids.size(1);
        const auto pos = torch::arange(t, ids.options());
        auto x = tokens_->forward(ids) + positions_->forward(pos).unsqueeze(0);
        const auto key_ok = batch.attention_mask.to(torch::kBool);             // [B,T]
        auto bias = torch::zeros({ids.size(0), 1, 1, t}, x.options())
                        .masked_fill(key_ok.logical_not().view({ids.size(0), 1, 1, t}), -1e9);
        if (causal_) {
            const auto future = torch::ones({t, t}, key_ok.options()).triu(1);
            bias = bias + torch::zeros({t, t}, x.options()).masked_fill(future, -1e9);
        }
        for (auto& layer : layers_) {
            if (checkpoints())
                x = checkpoint(*layer, [layer](const std::vector<torch::Tensor>& in) {
                        return std::vector<torch::Tensor>{layer->forward(in[0], in[1])};
                    }, {x, bias})[0];
            else
                x = layer->forward(x, bias);
        }
        if (causal_) return head_->forward(x);
        const auto mask = batch.attention_mask.unsqueeze(-1).to(x.dtype());
        return head_->forward((x * mask).sum(1) / mask.sum(1).clamp_min(1.0));
    }

    std::string describe() const override { return description_; }

private:
    bool causal_;
    torch::nn::Embedding tokens_{nullptr}, positions_{nullptr};
    std::vector<std::shared_ptr<EncoderLayer>> layers_;
    torch::nn::Linear head_{nullptr};
    std::string description_;
};

} // namespace

std::shared_ptr<Model> make_transformer(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    return std::make_shared<Transformer>(config, data, kernels);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
