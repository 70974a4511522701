// mlp: 784-256-128-10 on images; sized from the data otherwise. On token data
// the input is the masked mean of token embeddings (classification) or each
// token's embedding (language modelling: a bigram model).
//
// With --gradient-checkpointing each hidden layer (Linear, BatchNorm, ReLU,
// dropout) is a checkpointed block; the output layer is not. Where the body
// trains as the fused dense stack, that stack is one operator (one autograd
// node for all layers, which adds its gradients into .grad itself): it is
// checkpointed whole, as one block, rather than bypassed for a slower per-layer
// path that keeps no less (bench/memory_levers: each layer's saved activation is
// the next one's input, the very boundary checkpointing keeps).
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "models/gradient_checkpoint.h"
#include "models/model.h"

namespace accum {

namespace {

class Mlp final : public Model {
public:
    Mlp(const RunConfig& config, const TensorDataset& data, KernelSet kernels)
        : Model(kernels), task_(data.task) {
        std::int64_t in = data.num_features;
        if (task_ == Task::SequenceClassification || task_ == Task::LanguageModeling) {
            embedding_ = register_module("embedding", torch::nn::Embedding(data.vocab_size, 64));
            in = 64;
        }
        torch::nn::Sequential body;
        auto block = [&](std::int64_t from, std::int64_t to) {
            body->push_back(torch::nn::Linear(from, to));
            if (config.batch_norm) body->push_back(torch::nn::BatchNorm1d(to));
            body->push_back(torch::nn::ReLU());
            if (config.dropout > 0) body->push_back(torch::nn::Dropout(config.dropout));
        };
        block(in, 256);
        block(256, 128);
        body->push_back(torch::nn::Linear(128, data.num_classes));
        body_ = register_module("body", body);
        for (std::size_t i = 0; i < body_->size(); ++i)
            if (body_->ptr(i)->as<torch::nn::Linear>()) layer_starts_.push_back(i);
        // Without BatchNorm or dropout the body is Linear, ReLU, Linear, ReLU, Linear:
        // a dense stack the kernels may run as one operator, on the same parameters.
        if (dense_stack_trains_fused(config))
            for (const auto& layer : body_->children())
                if (const auto* linear = layer->as<torch::nn::Linear>()) {
                    fused_params_.push_back(linear->weight);
                    fused_params_.push_back(linear->bias);
                }
        description_ = "mlp " + std::to_string(in) + "-256-128-" + std::to_string(data.num_classes) +
                       (config.batch_norm ? " with BatchNorm" : "");
    }

    torch::Tensor logits(const Batch& batch) override {
        switch (task_) {
        case Task::ImageClassification:
        case Task::TabularClassification:
            return body(batch.input_ids.flatten(1));
        case Task::SequenceClassification: {
            const auto mask = batch.attention_mask.unsqueeze(-1).to(torch::kFloat32);
            const auto pooled = (embedding_->forward(batch.input_ids) * mask).sum(1) / mask.sum(1).clamp_min(1.0);
            return body(pooled);
        }
        case Task::LanguageModeling: {
            const auto e = embedding_->forward(batch.input_ids);
            return body(e.flatten(0, 1)).view({e.size(0), e.size(1), -1});
        }
        }
        return {};
    }

    std::string describe() const override { return description_; }

private:
    torch::Tensor body(const torch::Tensor& input) {
        const bool checkpointed = checkpoints();
        if (!fused_params_.empty()) {
            auto stack = [body = body_.ptr(), params = fused_params_, kernels = kernels()](const torch::Tensor& x) {
                return kernels.dense_stack(x, params, [&body](const torch::Tensor& h) { return body->forward(h); });
            };
            if (!checkpointed) return stack(input);
            return checkpoint(*body_, [stack](const torch::Tensor& x) { return stack(x); }, input);
        }
        if (!checkpointed) return body_->forward(input);
        auto x = input;
        for (std::size_t l = 0; l < layer_starts_.size(); ++l) {
            const auto begin = layer_starts_[l];
            const auto end = l + 1 < layer_starts_.size() ? layer_starts_[l + 1] : body_->size();
            auto layer = [body = body_.ptr(), begin, end](const std::vector<torch::Tensor>& in) {
                auto h = in[0];
                for (auto i = begin; i < end; ++i) h = (body->begin() + static_cast<std::ptrdiff_t>(i))->forward(h);
                return std::vector<torch::Tensor>{h};
            };
            if (l + 1 == layer_starts_.size()) { // the output layer: nothing to save by checkpointing it
                x = layer({x})[0];
                continue;
            }
            std::vector<torch::Tensor> parameters, buffers;
            for (auto i = begin; i < end; ++i) {
                for (const auto& p : body_->ptr(i)->parameters())
                    if (p.requires_grad()) parameters.push_back(p);
                for (const auto& b : body_->ptr(i)->buffers()) buffers.push_back(b);
            }
            x = checkpoint(layer, {x}, parameters, buffers)[0];
        }
        return x;
    }

    Task task_;
    std::vector<std::size_t> layer_starts_; // where each layer's modules begin in body_
    std::vector<torch::Tensor> fused_params_; // W₀, b₀, W₁, …, when the body is a dense stack
    torch::nn::Embedding embedding_{nullptr};
    torch::nn::Sequential body_{nullptr};
    std::string description_;
};

} // namespace

std::shared_ptr<Model> make_mlp(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    return std::make_shared<Mlp>(config, data, kernels);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
