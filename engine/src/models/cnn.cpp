// cnn: two conv blocks (conv 3x3, ReLU, max-pool 2) and two linear layers.
//
// Each block's ReLU and max-pool run as one operator (KernelSet::relu_max_pool)
// that keeps for backward the pooled output and a byte of argmax per window,
// not the ReLU's full-size output and int64 indices; the first convolution (one
// input channel) runs as im2col + GEMM (KernelSet::conv2d).
//
// With --gradient-checkpointing each conv block is a checkpointed block, run
// over the micro-batch in chunks (CheckpointOptions::batch_chunks, as many as
// keep a chunk's convolution output under 1 MiB; not with BatchNorm, whose
// statistics are the whole batch's). Chunks, because in this
// model the block's saved activations are not what sets the peak: its own
// backward working set is (the gradient of the first convolution's output, 100 KB
// per image), and only a chunk of the batch at a time shrinks it.
#include <algorithm>
#include <cstdlib>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "models/gradient_checkpoint.h"
#include "models/model.h"

namespace accum {

namespace {

// A conv block's modules in `features`: [begin, end), the last two ReLU and MaxPool2d.
struct BlockRange {
    std::size_t begin = 0, end = 0;
};

// Runs one conv block through the kernels: the convolution, BatchNorm (if
// any), then ReLU and max-pool. Takes its module list by shared_ptr: a checkpointed
// block runs again in backward.
torch::Tensor run_block(const std::shared_ptr<torch::nn::SequentialImpl>& features, const KernelSet& kernels,
                        BlockRange block, const torch::Tensor& input) {
    const auto pool_begin = block.end - 2;
    const auto conv = features->ptr(block.begin)->as<torch::nn::Conv2d>();
    auto h = kernels.conv2d(input, conv->weight, conv->bias, 1, [conv](const torch::Tensor& x) { return conv->forward(x); });
    for (auto i = block.begin + 1; i < pool_begin; ++i) h = (features->begin() + static_cast<std::ptrdiff_t>(i))->forward(h);
    return kernels.relu_max_pool(h, [&features, pool_begin](const torch::Tensor& x) {
        auto y = (features->begin() + static_cast<std::ptrdiff_t>(pool_begin))->forward(x);
        return (features->begin() + static_cast<std::ptrdiff_t>(pool_begin + 1))->forward(y);
    });
}

class Cnn final : public Model {
public:
    Cnn(const RunConfig& config, const TensorDataset& data, KernelSet kernels)
        : Model(kernels), batch_norm_(config.batch_norm) {
        torch::nn::Sequential f;
        auto conv_block = [&](std::int64_t in, std::int64_t out) {
            BlockRange block{f->size(), 0};
            f->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
            if (config.batch_norm) f->push_back(torch::nn::BatchNorm2d(out));
            f->push_back(torch::nn::ReLU());
            f->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
            block.end = f->size();
            blocks_.push_back(block);
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
        auto x = batch.input_ids;
        for (const auto block : blocks_) {
            if (checkpoints())
                x = checkpoint_block(block, x);
            else
                x = run_block(features_.ptr(), kernels(), block, x);
        }
        return head_->forward(x.flatten(1));
    }

    std::string describe() const override { return description_; }

private:
    torch::Tensor checkpoint_block(BlockRange block, const torch::Tensor& x) {
        std::vector<torch::Tensor> parameters, buffers;
        for (auto i = block.begin; i < block.end; ++i) {
            for (const auto& p : features_->ptr(i)->parameters())
                if (p.requires_grad()) parameters.push_back(p);
            for (const auto& b : features_->ptr(i)->buffers()) buffers.push_back(b);
        }
        CheckpointOptions options;
        const auto conv = features_->ptr(block.begin)->as<torch::nn::Conv2d>();
        const auto output_bytes = conv->options.out_channels() * x.size(2) * x.size(3) * x.element_size();
        options.batch_chunks = batch_norm_ ? 1 : checkpoint_chunks(x.size(0), output_bytes);
        return checkpoint(
            [features = features_.ptr(), kernels = kernels(), block](const std::vector<torch::Tensor>& in) {
                return std::vector<torch::Tensor>{run_block(features, kernels, block, in[0])};
            },
            {x}, parameters, buffers, options)[0];
    }

    torch::nn::Sequential features_{nullptr}, head_{nullptr};
    std::vector<BlockRange> blocks_;
    bool batch_norm_;
    std::string description_;
};

} // namespace

std::int64_t checkpoint_chunks(std::int64_t batch_size, std::int64_t bytes_per_sample) {
    // ACCUM_CHECKPOINT_CHUNK_BYTES=N (bench/memory_levers): chunks of at most N bytes instead.
    static const std::int64_t limit = [] {
        const char* text = std::getenv("ACCUM_CHECKPOINT_CHUNK_BYTES");
        const auto n = text ? std::atoll(text) : 0;
        return n > 0 ? static_cast<std::int64_t>(n) : kCheckpointChunkBytes;
    }();
    const auto per_chunk = std::max<std::int64_t>(1, limit / std::max<std::int64_t>(1, bytes_per_sample));
    return std::max<std::int64_t>(1, (batch_size + per_chunk - 1) / per_chunk);
}

std::shared_ptr<Model> make_cnn(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    return std::make_shared<Cnn>(config, data, kernels);
}

} // namespace accum
