// mlp: 784-256-128-10 on images; sized from the data otherwise. On token data
// the input is the masked mean of token embeddings (classification) or each
// token's embedding (language modelling: a bigram model).
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "models/model.h"

namespace accum {

namespace {

class Mlp final : public Model {
public:
    Mlp(const RunConfig& config, const TensorDataset& data, KernelSet kernels) : Model(kernels), task_(data.task) {
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
        if (fused_params_.empty()) return body_->forward(input);
        return kernels().dense_stack(input, fused_params_, [this](const torch::Tensor& x) { return body_->forward(x); });
    }

    Task task_;
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
