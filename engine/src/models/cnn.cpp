// cnn: two conv blocks (conv 3x3, ReLU, max-pool 2) and two linear layers.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "models/model.h"

namespace accum {

namespace {

class Cnn final : public Model {
public:
    Cnn(const RunConfig& config, const TensorDataset& data, KernelSet kernels) : Model(kernels) {
        torch::nn::Sequential f;
        auto conv_block = [&](std::int64_t in, std::int64_t out) {
            f->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
            if (config.batch_norm) f->push_back(torch::nn::BatchNorm2d(out));
            f->push_back(torch::nn::ReLU());
            f->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
        };
        conv_block(1, 32);
        conv_block(32, 64);
        features_ = register_module("features", f);
        const auto side = data.inputs.size(2) / 4, side2 = data.inputs.size(3) / 4;
        torch::nn::Sequential h;
        h->push_back(torch::nn::Linear(64 * side * side2, 128));
        h->push_back(torch::nn::ReLU());
        if (config.dropout > 0) h->push_back(torch::nn::Dropout(config.dropout));
        h->push_back(torch::nn::Linear(128, data.num_classes));
        head_ = register_module("head", h);
        description_ = std::string("cnn conv32-conv64-fc128-") + std::to_string(data.num_classes) +
                       (config.batch_norm ? " with BatchNorm" : "");
    }

    torch::Tensor logits(const Batch& batch) override {
        return head_->forward(features_->forward(batch.input_ids).flatten(1));
    }

    std::string describe() const override { return description_; }

private:
    torch::nn::Sequential features_{nullptr}, head_{nullptr};
    std::string description_;
};

} // namespace

std::shared_ptr<Model> make_cnn(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    return std::make_shared<Cnn>(config, data, kernels);
}

} // namespace accum
