// cnn: two conv blocks (conv 3x3, ReLU, max-pool 2) and two linear layers.
//
// Each block's ReLU and max-pool run as one operator (KernelSet::relu_max_pool)
// that keeps for backward the pooled output and a byte of argmax per window,
// not the ReLU's full-size output and int64 indices; the first convolution (one
// input channel) runs as im2col + GEMM (KernelSet::conv2d).
//
// With --gradient-checkpointing the policy is selective (frameworks choose which
// layers to checkpoint too): block 1 is checkpointed, block 2 runs in chunks with
// its graph kept (run_in_chunks: no recompute), each over the micro-batch in
// chunks of at most 1 MiB of convolution output (checkpoint_chunks: 64 images in
// 7 and 4 chunks). Block 2 runs so only where its ReLU and max-pool are the fused
// kernel (float32 on the CPU); where they are LibTorch's operators (CUDA,
// --cpu-kernels aten, autocast), which save the ReLU's output and int64 indices,
// it is checkpointed too: there chunks would keep more than checkpointing does.
// Why: a step's peak is set by the blocks' working sets (block 1's backward,
// block 2's forward and backward), not by what they save; chunks shrink a working
// set, recomputing buys only what a block saves. Block 2 saves little but its
// forward is most of the model's, so chunks without recompute suit it; block 1's
// forward is cheap, so recomputing it suits it. The measurements behind this:
// bench/MEMORY_LEVERS.md § "CNN: checkpoint the first block, run the second in
// chunks"; the design: docs/ARCHITECTURE.md.
// With BatchNorm (its statistics are the whole batch's: no chunks) both blocks
// are checkpointed whole. ACCUM_CNN_CHECKPOINT (below) sets other policies for
// the benchmark; a run made with it set records it (switches.h).
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "models/gradient_checkpoint.h"
#include "models/model.h"
#include "switches.h"

namespace accum {

namespace {

// Every convolution's zero padding ("same" for its 3 × 3 kernel): the modules
// are built with it, and KernelSet::conv2d (the fused im2col + GEMM) is given it.
constexpr std::int64_t kConvPadding = 1;

// A conv block's modules in `features`: [begin, end), the last two ReLU and MaxPool2d.
struct BlockRange {
    std::size_t begin = 0, end = 0;
};

// What --gradient-checkpointing does to a conv block: nothing, run it over the
// batch in chunks with its graph kept (run_in_chunks), or checkpoint it in
// chunks (recomputed in backward).
enum class BlockLever { Plain, Chunks, Checkpoint };

// The policy: block 1 checkpointed; block 2 in chunks where its ReLU and
// max-pool are the fused kernel (`fused_pool`), else checkpointed too (LibTorch's
// operators save the ReLU's output and int64 indices: too much to keep).
// ACCUM_CNN_CHECKPOINT=<lever>,<lever> (plain, chunks or checkpoint;
// bench/memory_levers) sets others, for comparison (kCnnCheckpointSwitch).
BlockLever block_lever(std::size_t block, bool fused_pool) {
    // Read once: the lever each block was given (none: the policy's).
    static const std::array<std::optional<BlockLever>, 2> chosen = [] {
        std::array<std::optional<BlockLever>, 2> levers;
        const char* text = std::getenv(kCnnCheckpointSwitch);
        std::istringstream in(text ? text : "");
        bool understood = true;
        std::size_t i = 0;
        for (std::string word; std::getline(in, word, ','); ++i) {
            std::optional<BlockLever> lever;
            if (word == "plain") lever = BlockLever::Plain;
            if (word == "chunks") lever = BlockLever::Chunks;
            if (word == "checkpoint") lever = BlockLever::Checkpoint;
            understood = understood && i < levers.size() && (lever || word.empty());
            if (i < levers.size()) levers[i] = lever;
        }
        if (!understood)
            switch_ignored(kCnnCheckpointSwitch, text,
                           "not two of plain, chunks or checkpoint (block 1, block 2); a block without one keeps "
                           "the default");
        return levers;
    }();
    if (block < chosen.size() && chosen[block]) return *chosen[block];
    return block > 0 && fused_pool ? BlockLever::Chunks : BlockLever::Checkpoint;
}

// Runs one conv block through the kernels: the convolution, BatchNorm (if
// any), then ReLU and max-pool. Takes its module list by shared_ptr: a checkpointed
// block runs again in backward.
torch::Tensor run_block(const std::shared_ptr<torch::nn::SequentialImpl>& features, const KernelSet& kernels,
                        BlockRange block, const torch::Tensor& input) {
    const auto pool_begin = block.end - 2;
    const auto conv = features->ptr(block.begin)->as<torch::nn::Conv2d>();
    auto h = kernels.conv2d(input, conv->weight, conv->bias, kConvPadding,
                            [conv](const torch::Tensor& x) { return conv->forward(x); });
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
            f->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(kConvPadding)));
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
        for (std::size_t i = 0; i < blocks_.size(); ++i) x = block_forward(i, x);
        return head_->forward(x.flatten(1));
    }

    std::string describe() const override { return description_; }

private:
    // Conv block i, with --gradient-checkpointing as the policy above says.
    torch::Tensor block_forward(std::size_t i, const torch::Tensor& x) {
        const auto block = blocks_[i];
        auto run = [features = features_.ptr(), kernels = kernels(), block](const std::vector<torch::Tensor>& in) {
            return std::vector<torch::Tensor>{run_block(features, kernels, block, in[0])};
        };
        if (!gradient_checkpointing()) return run({x})[0];
        const auto conv = features_->ptr(block.begin)->as<torch::nn::Conv2d>();
        const auto output_bytes = conv->options.out_channels() * x.size(2) * x.size(3) * x.element_size();
        // Without a graph to keep (evaluation: eval mode or no gradients) the
        // same chunks bound the working set, so that an evaluation peaks no
        // higher than the training whose budget it shares. BatchNorm needs the
        // whole batch only in training mode (eval mode uses running statistics).
        const bool whole_batch = batch_norm_ && is_training();
        const auto chunks = whole_batch ? 1 : checkpoint_chunks(x.size(0), output_bytes);
        if (!checkpoints() || !torch::GradMode::is_enabled())
            return chunks > 1 ? run_in_chunks(run, {x}, chunks)[0] : run({x})[0];
        switch (batch_norm_ ? BlockLever::Checkpoint : block_lever(i, kernels().fuses_relu_max_pool(x))) {
        case BlockLever::Plain:
            return run({x})[0];
        case BlockLever::Chunks:
            return run_in_chunks(run, {x}, chunks)[0];
        case BlockLever::Checkpoint:
            break;
        }
        std::vector<torch::Tensor> parameters, buffers;
        for (auto j = block.begin; j < block.end; ++j) {
            for (const auto& p : features_->ptr(j)->parameters())
                if (p.requires_grad()) parameters.push_back(p);
            for (const auto& b : features_->ptr(j)->buffers()) buffers.push_back(b);
        }
        CheckpointOptions options;
        options.batch_chunks = chunks;
        return checkpoint(run, {x}, parameters, buffers, options)[0];
    }

    torch::nn::Sequential features_{nullptr}, head_{nullptr};
    std::vector<BlockRange> blocks_;
    bool batch_norm_;
    std::string description_;
};

} // namespace

std::int64_t checkpoint_chunks(std::int64_t batch_size, std::int64_t bytes_per_sample) {
    // ACCUM_CHECKPOINT_CHUNK_BYTES=N (bench/memory_levers; kCheckpointChunkBytesSwitch): chunks of
    // at most N bytes instead.
    static const std::int64_t limit = [] {
        const char* text = std::getenv(kCheckpointChunkBytesSwitch);
        if (text == nullptr || *text == '\0') return kCheckpointChunkBytes;
        std::int64_t n = 0;
        const std::string_view view(text);
        const auto r = std::from_chars(view.data(), view.data() + view.size(), n);
        if (r.ec == std::errc() && r.ptr == view.data() + view.size() && n > 0) return n;
        static const std::string instead =
            "not a positive number of bytes; chunks of " + std::to_string(kCheckpointChunkBytes) + " bytes instead";
        switch_ignored(kCheckpointChunkBytesSwitch, text, instead.c_str());
        return kCheckpointChunkBytes;
    }();
    const auto per_chunk = std::max<std::int64_t>(1, limit / std::max<std::int64_t>(1, bytes_per_sample));
    return std::max<std::int64_t>(1, (batch_size + per_chunk - 1) / per_chunk);
}

std::shared_ptr<Model> make_cnn(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    return std::make_shared<Cnn>(config, data, kernels);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
