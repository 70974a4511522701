// SPDX-License-Identifier: GPL-3.0-or-later
// Gradient checkpointing: the same numbers as without it (dropout, BatchNorm,
// the fused kernels, chunks of the batch), its misuse reported, and the memory
// it saves. Torch first, then Qt Test (this target sets QT_NO_KEYWORDS).
#include <type_traits>

#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/modules/transformerlayer.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/autograd.h>

#include <QtTest/QtTest>

#include "accum/session.h"
#include "accum/sink.h"
#include "data/dataset.h"
#include "memory/counting_allocator.h"
#include "memory/memory_categories.h"
#include "memory/memory_estimate.h"
#include "kernels/fused_attention.h"
#include "kernels/fused_dense.h"
#include "models/gradient_checkpoint.h"
#include "models/model.h"

#include "capture.h"

using namespace accum;
using Tensors = std::vector<torch::Tensor>;
namespace F = torch::nn::functional;

namespace {

// ---------------------------------------------------------------------------
// Small models, each runnable with and without checkpointing per block.

class Net : public torch::nn::Module {
public:
    virtual torch::Tensor loss(const torch::Tensor& input, bool checkpointed) = 0;
    CheckpointOptions options; // batch_chunks
};

torch::Tensor labels_for(std::int64_t batch, std::int64_t classes) { return torch::arange(batch) % classes; }

// Linear, ReLU, dropout per block; the data input needs no gradient unless asked.
class MlpNet final : public Net {
public:
    explicit MlpNet(double dropout) {
        for (int i = 0; i < 3; ++i)
            blocks_.push_back(register_module(
                "block" + std::to_string(i),
                torch::nn::Sequential(torch::nn::Linear(i == 0 ? 20 : 48, 48), torch::nn::ReLU(), torch::nn::Dropout(dropout))));
        head_ = register_module("head", torch::nn::Linear(48, 5));
    }
    torch::Tensor loss(const torch::Tensor& input, bool checkpointed) override {
        auto x = input;
        for (auto& b : blocks_)
            x = checkpointed ? checkpoint(*b, [m = b.ptr()](const torch::Tensor& t) { return m->forward(t); }, x, options) : b->forward(x);
        return F::cross_entropy(head_->forward(x), labels_for(x.size(0), 5));
    }

private:
    std::vector<torch::nn::Sequential> blocks_;
    torch::nn::Linear head_{nullptr};
};

// Two conv blocks (conv, [BatchNorm], ReLU, max-pool, dropout) and a linear head.
class ConvNet final : public Net {
public:
    ConvNet(bool batch_norm, double dropout) {
        auto block = [&](std::int64_t in, std::int64_t out) {
            torch::nn::Sequential s;
            s->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)));
            if (batch_norm) s->push_back(torch::nn::BatchNorm2d(out));
            s->push_back(torch::nn::ReLU());
            s->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
            s->push_back(torch::nn::Dropout(dropout));
            return s;
        };
        blocks_.push_back(register_module("block0", block(3, 8)));
        blocks_.push_back(register_module("block1", block(8, 16)));
        head_ = register_module("head", torch::nn::Linear(16 * 4 * 4, 5));
    }
    torch::Tensor loss(const torch::Tensor& input, bool checkpointed) override {
        auto x = input;
        for (auto& b : blocks_)
            x = checkpointed ? checkpoint(*b, [m = b.ptr()](const torch::Tensor& t) { return m->forward(t); }, x, options) : b->forward(x);
        return F::cross_entropy(head_->forward(x.flatten(1)), labels_for(x.size(0), 5));
    }

private:
    std::vector<torch::nn::Sequential> blocks_;
    torch::nn::Linear head_{nullptr};
};

// Token embedding, two nn::TransformerEncoderLayer with dropout, mean pool, head.
// The key-padding mask is a second block input that takes no gradient.
class EncoderNet final : public Net {
public:
    EncoderNet() {
        embedding_ = register_module("embedding", torch::nn::Embedding(50, 32));
        for (int i = 0; i < 2; ++i)
            layers_.push_back(register_module(
                "layer" + std::to_string(i),
                torch::nn::TransformerEncoderLayer(torch::nn::TransformerEncoderLayerOptions(32, 4).dim_feedforward(64).dropout(0.1))));
        head_ = register_module("head", torch::nn::Linear(32, 5));
    }
    torch::Tensor loss(const torch::Tensor& ids, bool checkpointed) override {
        auto x = embedding_->forward(ids).transpose(0, 1); // [T, B, D]
        const auto padding = ids.eq(0);                     // [B, T]
        for (auto& layer : layers_) {
            if (checkpointed)
                x = checkpoint(*layer,
                               [m = layer.ptr()](const Tensors& in) { return Tensors{m->forward(in[0], {}, in[1])}; },
                               {x, padding})[0];
            else
                x = layer->forward(x, {}, padding);
        }
        return F::cross_entropy(head_->forward(x.mean(0)), labels_for(ids.size(0), 5));
    }

private:
    torch::nn::Embedding embedding_{nullptr};
    std::vector<torch::nn::TransformerEncoderLayer> layers_;
    torch::nn::Linear head_{nullptr};
};

enum class Kind { Mlp, MlpInputGrad, Conv, ConvBatchNorm, Encoder, MlpChunks, ConvChunks, MlpChunksDropout };

std::shared_ptr<Net> build(Kind kind) {
    switch (kind) {
    case Kind::Mlp:
    case Kind::MlpInputGrad:
        return std::make_shared<MlpNet>(0.3);
    case Kind::Conv:
        return std::make_shared<ConvNet>(false, 0.2);
    case Kind::ConvBatchNorm:
        return std::make_shared<ConvNet>(true, 0.2);
    case Kind::Encoder:
        return std::make_shared<EncoderNet>();
    case Kind::MlpChunks: {
        auto net = std::make_shared<MlpNet>(0.0);
        net->options.batch_chunks = 3; // 8 samples: chunks of 3, 3, 2
        return net;
    }
    case Kind::MlpChunksDropout: {
        auto net = std::make_shared<MlpNet>(0.3);
        net->options.batch_chunks = 3;
        return net;
    }
    case Kind::ConvChunks: {
        auto net = std::make_shared<ConvNet>(false, 0.0);
        net->options.batch_chunks = 2;
        return net;
    }
    }
    return nullptr;
}

torch::Tensor make_input(Kind kind) {
    switch (kind) {
    case Kind::Mlp:
        return torch::randn({8, 20});
    case Kind::MlpChunks:
    case Kind::MlpChunksDropout:
    case Kind::MlpInputGrad:
        return torch::randn({8, 20}).requires_grad_(true);
    case Kind::Conv:
    case Kind::ConvBatchNorm:
    case Kind::ConvChunks:
        return torch::randn({4, 3, 16, 16});
    case Kind::Encoder: {
        auto ids = torch::randint(1, 50, {4, 7}, torch::kLong);
        ids.index_put_({1, torch::indexing::Slice(5, torch::indexing::None)}, 0); // padding at the end of two rows
        ids.index_put_({3, torch::indexing::Slice(4, torch::indexing::None)}, 0);
        return ids;
    }
    }
    return {};
}

struct Trace {
    std::vector<double> losses; // per micro-batch, unscaled
    Tensors grads;              // every parameter's .grad after the window
    Tensors buffers;            // BatchNorm's running statistics
    Tensors input_grads;
    double next_random = 0;     // the generator continues as without checkpointing
};

// K micro-batches of loss / K into .grad, in training mode (dropout on), seeded.
Trace run_window(Kind kind, bool checkpointed, int k) {
    torch::manual_seed(1);
    auto net = build(kind);
    net->train();
    torch::manual_seed(2);
    Tensors inputs;
    for (int i = 0; i < k; ++i) inputs.push_back(make_input(kind));
    torch::manual_seed(3);
    Trace t;
    for (const auto& x : inputs) {
        const auto loss = net->loss(x, checkpointed);
        (loss / k).backward();
        t.losses.push_back(loss.item<double>());
    }
    t.next_random = torch::rand({1}).item<double>();
    for (const auto& p : net->parameters()) t.grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    for (const auto& b : net->buffers()) t.buffers.push_back(b.clone());
    for (const auto& x : inputs)
        if (x.requires_grad()) t.input_grads.push_back(x.grad().clone());
    return t;
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// Peak of counted bytes above what was alive before `fn`, and the bytes `fn` left alive.
struct Measured {
    std::int64_t peak = 0;
    std::int64_t left = 0;
};
template <class Fn>
Measured measure(Fn&& fn) {
    const auto before = memory::cpu_counters().current;
    memory::reset_window_peak();
    fn();
    return {memory::cpu_counters().window_peak - before, memory::cpu_counters().current - before};
}

// Moves the parameters into counted storage, as the session does.
void count_parameters(torch::nn::Module& m) {
    torch::NoGradGuard guard;
    for (auto& p : m.parameters()) p.set_data(p.clone());
}

void release_gradients(const Tensors& params) {
    for (const auto& p : params)
        if (p.grad().defined()) p.mutable_grad().reset();
}

} // namespace

class TestGradientCheckpoint : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { memory::install_counting_allocator(); }

    // ---- Gradient checkpointing ------------------------------------------

    // ARCHITECTURE.md I11: checkpointing changes memory and time, never the
    // numbers. The re-run computes the same operators on the same inputs with
    // the same dropout masks, so the figures agree to rounding (1e-6 is the
    // issue's tolerance); three micro-batches accumulate in .grad.
    void checkpointMatchesPlain_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("k");
        QTest::newRow("mlp, dropout, data input without grad") << int(Kind::Mlp) << 1;
        QTest::newRow("mlp, 3 micro-batches") << int(Kind::Mlp) << 3;
        QTest::newRow("mlp, input with grad, 3 micro-batches") << int(Kind::MlpInputGrad) << 3;
        QTest::newRow("conv, dropout, 3 micro-batches") << int(Kind::Conv) << 3;
        QTest::newRow("conv, BatchNorm, 3 micro-batches") << int(Kind::ConvBatchNorm) << 3;
        QTest::newRow("transformer encoder layers, dropout") << int(Kind::Encoder) << 1;
        QTest::newRow("transformer encoder layers, 3 micro-batches") << int(Kind::Encoder) << 3;
        // batch_chunks: the block re-run chunk by chunk; the parameters'
        // gradients are sums over chunks, equal to rounding.
        QTest::newRow("mlp in 3 chunks, input with grad, 3 micro-batches") << int(Kind::MlpChunks) << 3;
        QTest::newRow("conv in 2 chunks, 3 micro-batches") << int(Kind::ConvChunks) << 3;
        // Without MKL the CPU generator fills a tensor element by element, so the
        // chunks' masks are those of one draw over the batch.
        QTest::newRow("mlp in 3 chunks, dropout, 3 micro-batches") << int(Kind::MlpChunksDropout) << 3;
    }
    void checkpointMatchesPlain() {
        QFETCH(int, kind);
        QFETCH(int, k);
        if (Kind(kind) == Kind::MlpChunksDropout && at::hasMKL())
            QSKIP("with MKL, dropout over chunks draws other masks than over the batch");
        const auto plain = run_window(Kind(kind), false, k);
        const auto checked = run_window(Kind(kind), true, k);
        QCOMPARE(checked.losses.size(), plain.losses.size());
        for (std::size_t i = 0; i < plain.losses.size(); ++i)
            QVERIFY2(std::abs(checked.losses[i] - plain.losses[i]) <= 1e-6,
                     qPrintable(QString("micro-batch %1: loss %2 vs %3").arg(i).arg(checked.losses[i], 0, 'g', 10).arg(plain.losses[i], 0, 'g', 10)));
        QCOMPARE(checked.grads.size(), plain.grads.size());
        for (std::size_t i = 0; i < plain.grads.size(); ++i) {
            QVERIFY2(plain.grads[i].defined() && checked.grads[i].defined(), qPrintable(QString("parameter %1 has no gradient").arg(i)));
            const auto d = max_abs_diff(checked.grads[i], plain.grads[i]);
            QVERIFY2(d <= 1e-6, qPrintable(QString("parameter %1: gradients differ by %2").arg(i).arg(d)));
        }
        // Dropout drew masks in the forward: the gradients would differ if the re-run drew others.
        for (std::size_t i = 0; i < plain.buffers.size(); ++i)
            QVERIFY2(max_abs_diff(checked.buffers[i], plain.buffers[i]) <= 1e-6,
                     qPrintable(QString("buffer %1 moved differently (BatchNorm updated twice?)").arg(i)));
        QCOMPARE(checked.input_grads.size(), plain.input_grads.size());
        for (std::size_t i = 0; i < plain.input_grads.size(); ++i)
            QVERIFY(max_abs_diff(checked.input_grads[i], plain.input_grads[i]) <= 1e-6);
        QCOMPARE(checked.next_random, plain.next_random);
    }

    // Without the RNG restore the re-run draws other masks: the test above can fail.
    void checkpointWithoutRngRestoreDiffers() {
        torch::manual_seed(1);
        auto block = torch::nn::Sequential(torch::nn::Linear(20, 48), torch::nn::Dropout(0.5));
        const auto x = torch::randn({8, 20});
        auto grad_of = [&](bool preserve) {
            block->zero_grad();
            torch::manual_seed(5);
            CheckpointOptions options;
            options.preserve_rng_state = preserve;
            const auto y = checkpoint(*block, [m = block.ptr()](const torch::Tensor& t) { return m->forward(t); }, x, options);
            y.pow(2).sum().backward();
            return block->parameters()[0].grad().clone();
        };
        torch::manual_seed(5);
        const auto plain_y = block->forward(x);
        block->zero_grad();
        plain_y.pow(2).sum().backward();
        const auto plain = block->parameters()[0].grad().clone();
        QVERIFY(max_abs_diff(grad_of(true), plain) <= 1e-6);
        QVERIFY(max_abs_diff(grad_of(false), plain) > 1e-3);
    }

    // The parameters are inputs of the checkpoint's node, so autograd::grad
    // reaches them (torch.utils.checkpoint's reentrant variant cannot).
    void autogradGradReachesParameters() {
        torch::manual_seed(1);
        auto block = torch::nn::Sequential(torch::nn::Linear(6, 8), torch::nn::Tanh(), torch::nn::Linear(8, 3));
        const auto x = torch::randn({5, 6});
        const auto w = block->parameters()[0];
        const auto plain = torch::autograd::grad({block->forward(x).pow(2).sum()}, {w})[0];
        const auto y = checkpoint(*block, [m = block.ptr()](const torch::Tensor& t) { return m->forward(t); }, x);
        const auto checked = torch::autograd::grad({y.pow(2).sum()}, {w})[0];
        QVERIFY(max_abs_diff(checked, plain) <= 1e-6);
        QVERIFY(!w.grad().defined()); // nothing went to .grad on the side
    }

    // No grad mode (evaluation): the block just runs.
    void noGradRunsTheBlock() {
        auto block = torch::nn::Linear(4, 2);
        torch::NoGradGuard guard;
        const auto y = checkpoint(*block, [m = block.ptr()](const torch::Tensor& t) { return m->forward(t); }, torch::randn({3, 4}));
        QVERIFY(!y.requires_grad());
    }

    // The fused MLP body (one autograd node over all layers) inside one
    // checkpoint, with its gradients in place as a training run asks: its backward
    // adds the weight gradients straight into .grad and returns none for them,
    // and the checkpoint passes that on, so .grad is filled once, as without.
    void fusedMlpBodyInsideCheckpoint() {
        torch::manual_seed(1);
        auto body = torch::nn::Sequential(torch::nn::Linear(30, 24), torch::nn::ReLU(), torch::nn::Linear(24, 16),
                                          torch::nn::ReLU(), torch::nn::Linear(16, 4));
        Tensors params;
        for (const auto& layer : body->children())
            if (const auto* linear = layer->as<torch::nn::Linear>()) {
                params.push_back(linear->weight);
                params.push_back(linear->bias);
            }
        const auto x = torch::randn({12, 30});
        QVERIFY(fused_dense_available(x, params));
        auto window = [&](bool checkpointed) {
            release_gradients(params);
            for (int i = 0; i < 3; ++i) {
                const auto xi = x * (i + 1);
                const auto y = checkpointed ? checkpoint([params](const Tensors& in) { return Tensors{fused_dense(in[0], params, true)}; },
                                                         {xi}, params)[0]
                                            : fused_dense(xi, params, true);
                (y.pow(2).mean() / 3).backward();
            }
            Tensors g;
            for (const auto& p : params) g.push_back(p.grad().clone());
            return g;
        };
        const auto plain = window(false), checked = window(true);
        for (std::size_t i = 0; i < params.size(); ++i) QVERIFY(max_abs_diff(checked[i], plain[i]) <= 1e-6);
    }

    // The engine's fused CPU attention (its own autograd node) inside a
    // checkpointed layer: projection, attention, output projection, with a
    // key-padding bias as a second input that takes no gradient.
    void fusedAttentionInsideCheckpoint() {
        torch::manual_seed(1);
        auto qkv = torch::nn::Linear(16, 48);
        auto out = torch::nn::Linear(16, 16);
        auto layer = [qkv = qkv.ptr(), out = out.ptr()](const Tensors& in) {
            return Tensors{out->forward(fused_attention(qkv->forward(in[0]), in[1], 4, 0.5))};
        };
        Tensors params = qkv->parameters();
        for (const auto& p : out->parameters()) params.push_back(p);
        const auto x = torch::randn({3, 5, 16}).requires_grad_(true);
        auto bias = torch::zeros({3, 1, 1, 5});
        bias.index_put_({1, 0, 0, torch::indexing::Slice(3, torch::indexing::None)}, -1e9);
        QVERIFY(fused_attention_available(qkv->forward(x), false));
        auto grads = [&](bool checkpointed) {
            for (const auto& p : params) p.mutable_grad() = torch::Tensor();
            x.mutable_grad() = torch::Tensor();
            const auto y = checkpointed ? checkpoint(layer, {x, bias}, params)[0] : layer({x, bias})[0];
            y.pow(2).sum().backward();
            Tensors g{x.grad().clone()};
            for (const auto& p : params) g.push_back(p.grad().clone());
            return g;
        };
        const auto plain = grads(false), checked = grads(true);
        for (std::size_t i = 0; i < plain.size(); ++i) QVERIFY(max_abs_diff(checked[i], plain[i]) <= 1e-6);
    }

    // Misuse is an error that says what to change.
    void misuseIsReported() {
        torch::manual_seed(1);
        auto lin = torch::nn::Linear(4, 4);
        const auto x = torch::randn({2, 4}).requires_grad_(true);
        auto expect_error = [](const std::function<void()>& fn, const char* words) {
            try {
                fn();
            } catch (const std::exception& e) {
                QVERIFY2(QString(e.what()).contains(words), e.what());
                return;
            }
            QFAIL("no error");
        };
        // A parameter the block reads but was not told about: its gradient would be lost.
        expect_error(
            [&] {
                const auto y = checkpoint([m = lin.ptr()](const Tensors& in) { return Tensors{m->forward(in[0])}; }, {x}, {})[0];
                y.sum().backward();
            },
            "neither one of its inputs nor one of its parameters");
        // A tensor computed outside the block, with a graph of its own, captured.
        expect_error(
            [&] {
                const auto w2 = lin->weight * 2;
                const auto y =
                    checkpoint([w2](const Tensors& in) { return Tensors{torch::matmul(in[0], w2.t())}; }, {x}, {lin->weight})[0];
                y.sum().backward();
            },
            "computed outside it");
        // A block that computes something else when re-run.
        expect_error(
            [&] {
                auto calls = std::make_shared<int>(0);
                const auto y = checkpoint(
                    [m = lin.ptr(), calls](const Tensors& in) {
                        return Tensors{++*calls == 1 ? m->forward(in[0]) : m->forward(in[0]).narrow(0, 0, 1)};
                    },
                    {x}, lin->parameters())[0];
                y.sum().backward();
            },
            "differs in shape or type");
        // An input changed in place between forward and backward (LibTorch's own check).
        expect_error(
            [&] {
                auto h = x * 1;
                const auto y = checkpoint(*lin, [m = lin.ptr()](const torch::Tensor& t) { return m->forward(t); }, h);
                h.add_(1);
                y.sum().backward();
            },
            "modified by an inplace operation");
        // Parameters updated between forward and backward.
        expect_error(
            [&] {
                const auto y = checkpoint(*lin, [m = lin.ptr()](const torch::Tensor& t) { return m->forward(t); }, x);
                {
                    torch::NoGradGuard guard;
                    lin->weight.add_(1);
                }
                y.sum().backward();
            },
            "modified by an inplace operation");
        expect_error([&] { checkpoint(CheckpointBlock{}, {x}, {}); }, "the block is empty");
        expect_error([&] { checkpoint(*lin, [m = lin.ptr()](const torch::Tensor& t) { return m->forward(t); }, torch::Tensor()); },
                     "input 0 is undefined");
        expect_error([&] { checkpoint([](const Tensors&) { return Tensors{}; }, {x}, {}); }, "returned no tensors");
        CheckpointOptions chunks;
        chunks.batch_chunks = 2;
        auto bn = torch::nn::BatchNorm1d(4);
        expect_error([&] { checkpoint(*bn, [m = bn.ptr()](const torch::Tensor& t) { return m->forward(t); }, x, chunks); },
                     "batch_chunks with buffers");
        expect_error(
            [&] {
                checkpoint(*lin, [m = lin.ptr()](const torch::Tensor& t) { return m->forward(t).sum(0); }, x, chunks)
                    .sum()
                    .backward();
            },
            "must have the batch as their first dimension");
        chunks.batch_chunks = 0;
        expect_error([&] { checkpoint(*lin, [m = lin.ptr()](const torch::Tensor& t) { return m->forward(t); }, x, chunks); },
                     "batch_chunks is 0");
        // The same for a block run in chunks with its graph kept.
        expect_error([&] { run_in_chunks(CheckpointBlock{}, {x}, 2); }, "the block is empty");
        expect_error([&] { run_in_chunks([](const Tensors& in) { return in; }, {x}, 0); }, "chunks is 0");
        expect_error([&] { run_in_chunks([](const Tensors& in) { return Tensors{in[0].sum(0)}; }, {x}, 2); },
                     "must have the batch as their first dimension");
    }

    // Checkpointing keeps only the block boundaries between forward and
    // backward, and the peak of forward + backward drops with it. Six blocks of
    // Linear(64, 512), ReLU, Linear(512, 64), ReLU at micro-batch 256 (float32):
    // without checkpointing each block keeps its 512-wide ReLU output (saved by
    // the ReLU and the second Linear) and its 64-wide output, 576 floats per
    // sample; with it, only its 64-wide output (the next block's input). In
    // backward one block is re-run at a time.
    void checkpointSavesMemory() {
        const memory::CountingScope counting;
        constexpr int kBlocks = 6;
        constexpr std::int64_t kBatch = 256, kWide = 512, kNarrow = 64;
        torch::manual_seed(1);
        std::vector<torch::nn::Sequential> blocks;
        for (int i = 0; i < kBlocks; ++i)
            blocks.push_back(torch::nn::Sequential(torch::nn::Linear(kNarrow, kWide), torch::nn::ReLU(),
                                                   torch::nn::Linear(kWide, kNarrow), torch::nn::ReLU()));
        Tensors params;
        for (auto& b : blocks) {
            count_parameters(*b);
            for (const auto& p : b->parameters()) params.push_back(p);
        }
        const auto x = torch::randn({kBatch, kNarrow});
        auto forward = [&](bool checkpointed, std::int64_t chunks = 1) {
            CheckpointOptions options;
            options.batch_chunks = chunks;
            auto h = x;
            for (auto& b : blocks)
                h = checkpointed ? checkpoint(*b, [m = b.ptr()](const torch::Tensor& t) { return m->forward(t); }, h, options)
                                 : b->forward(h);
            return h.pow(2).mean();
        };
        // Gradients exist before (kept at zero), so what is measured is activations only.
        forward(false).backward();
        auto run = [&](bool checkpointed, std::int64_t chunks = 1) {
            for (const auto& p : params) p.mutable_grad().zero_();
            torch::Tensor loss;
            const auto after_forward = measure([&] { loss = forward(checkpointed, chunks); });
            loss = torch::Tensor();
            const auto step = measure([&] { loss = forward(checkpointed, chunks); loss.backward(); loss = torch::Tensor(); });
            return std::make_pair(after_forward.left, step.peak);
        };
        const auto [kept_plain, peak_plain] = run(false);
        const auto [kept_checked, peak_checked] = run(true);
        const auto [kept_chunked, peak_chunked] = run(true, 4);
        const std::int64_t f = 4;
        qInfo("kept after forward: %lld B plain, %lld B checkpointed; peak of forward + backward: %lld B plain, "
              "%lld B checkpointed (%.2f ×)",
              (long long)kept_plain, (long long)kept_checked, (long long)peak_plain, (long long)peak_checked,
              double(peak_checked) / double(peak_plain));
        qInfo("in 4 chunks: kept %lld B, peak %lld B (%.2f ×)", (long long)kept_chunked, (long long)peak_chunked,
              double(peak_chunked) / double(peak_plain));
        QVERIFY(kept_plain >= kBlocks * kBatch * (kWide + kNarrow) * f);
        // Block outputs, plus the loss's own few (pow saves its input: the last output).
        QVERIFY(kept_checked <= kBlocks * kBatch * kNarrow * f + 4096);
        // Peak: 6 × 576 saved floats per sample plus the backward's working set,
        // against 6 × 64 plus one block re-run with its backward.
        QVERIFY2(peak_checked <= 0.6 * peak_plain, "checkpointing did not lower the peak");
        // In chunks the one re-run block holds a quarter of its activations at once.
        QCOMPARE(kept_chunked, kept_checked);
        QVERIFY2(peak_chunked < peak_checked, "re-running in chunks did not lower the peak");
        // The gradients are unchanged by all this.
        Tensors g_plain, g_checked;
        for (const auto& p : params) p.mutable_grad().zero_();
        forward(false).backward();
        for (const auto& p : params) g_plain.push_back(p.grad().clone());
        for (const auto& p : params) p.mutable_grad().zero_();
        forward(true).backward();
        for (const auto& p : params) g_checked.push_back(p.grad().clone());
        for (std::size_t i = 0; i < params.size(); ++i) QVERIFY(max_abs_diff(g_checked[i], g_plain[i]) <= 1e-6);
    }

    // run_in_chunks keeps the graph and runs the block chunk by chunk: the same
    // outputs and gradients (parameters and input, to rounding), nothing more kept
    // after forward than the whole block keeps but its output once more (the
    // concatenation; the last ReLU saves its chunks), and in backward about a
    // quarter of the working set: one chunk's gradients at a time, the input's
    // gradient gathered once (not a batch-sized gradient per chunk), plus the
    // parameters' gradients, which autograd sums over the chunks before they
    // reach .grad (256 KB here). Linear(64, 512), ReLU, Linear(512, 64), ReLU at
    // micro-batch 1024, 4 chunks.
    void runInChunksShrinksTheWorkingSet() {
        const memory::CountingScope counting;
        constexpr std::int64_t kBatch = 1024, kWide = 512, kNarrow = 64, f = 4;
        torch::manual_seed(1);
        auto block = torch::nn::Sequential(torch::nn::Linear(kNarrow, kWide), torch::nn::ReLU(),
                                           torch::nn::Linear(kWide, kNarrow), torch::nn::ReLU());
        count_parameters(*block);
        const auto x = torch::randn({kBatch, kNarrow}).requires_grad_(true);
        auto forward = [&](std::int64_t chunks) {
            const auto run = [m = block.ptr()](const Tensors& in) { return Tensors{m->forward(in[0])}; };
            return run_in_chunks(run, {x}, chunks)[0];
        };
        // Gradients exist before (kept at zero), so what is measured is activations only.
        forward(1).pow(2).sum().backward();
        struct Result {
            torch::Tensor output;
            Tensors grads;
            std::int64_t kept = 0, peak = 0;
        };
        auto run = [&](std::int64_t chunks) {
            Result r;
            for (auto& p : block->parameters()) p.mutable_grad().zero_();
            x.mutable_grad().zero_();
            torch::Tensor y;
            r.kept = measure([&] { y = forward(chunks); }).left;
            y = torch::Tensor();
            r.peak = measure([&] {
                         y = forward(chunks);
                         r.output = y.detach().clone();
                         y.pow(2).sum().backward();
                         y = torch::Tensor();
                     }).peak;
            for (const auto& p : block->parameters()) r.grads.push_back(p.grad().clone());
            r.grads.push_back(x.grad().clone());
            return r;
        };
        const auto whole = run(1);
        const auto chunked = run(4);
        qInfo("kept after forward: %lld B whole, %lld B in 4 chunks; peak of forward + backward: %lld B, %lld B",
              (long long)whole.kept, (long long)chunked.kept, (long long)whole.peak, (long long)chunked.peak);
        QVERIFY(max_abs_diff(chunked.output, whole.output) <= 1e-6);
        for (std::size_t i = 0; i < whole.grads.size(); ++i)
            QVERIFY2(max_abs_diff(chunked.grads[i], whole.grads[i]) <= 1e-6 * std::max(1.0, whole.grads[i].abs().max().item<double>()),
                     qPrintable(QString::number(i)));
        QVERIFY(chunked.kept <= whole.kept + kBatch * kNarrow * f + 4096);
        // Whole: kept plus two wide gradients at once (the ReLU's and the
        // Linear's); in chunks: a quarter of them, plus the input's gradient.
        const auto working_whole = whole.peak - whole.kept, working_chunked = chunked.peak - chunked.kept;
        QVERIFY(working_whole >= 2 * kBatch * kWide * f);
        QVERIFY2(working_chunked <= working_whole / 2,
                 qPrintable(QStringLiteral("%1 vs %2").arg(working_chunked).arg(working_whole)));
    }
};

QTEST_GUILESS_MAIN(TestGradientCheckpoint)
#include "test_gradient_checkpoint.moc"
