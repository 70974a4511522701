// Gradient checkpointing against none, side by side in one process: the peak of
// activations in an optimizer step (ActivationPeakMeter on the counting
// allocator) and the step time, at micro-batch B × K, for
//   cnn          the engine's CNN (make_model), each conv block (conv, ReLU,
//                max-pool) checkpointed;
//   mlp          the engine's MLP on the LibTorch path, each hidden layer checkpointed
//                (mlp-dropout: with dropout 0.1);
//   transformer  the engine's encoder layer (transformer.cpp: d 64, 4 heads,
//                feed-forward 128, post-norm, the fused CPU attention) stacked
//                4 deep, each layer checkpointed, on synthetic-pairs.
// Windows alternate plain / checkpointed so both see the same machine; SGD
// momentum 0.9, zero_grad(set_to_none) as the engine does. Prints, per model, the
// median window time and the largest peak of activations of each, and the ratios
// (issue 19's targets: activations ≤ 0.6 ×, time ≤ 1.45 ×).
//
//   cmake --build build --target memory_levers
//   build/bench/memory_levers [model=all|cnn|transformer|mlp|mlp-dropout] [windows=12] [batch=64] [k=4]
//                             [threads=0: cnn 2, others 1]
//                             [chunks=1] [cnn-granularity=block|conv]
//
// chunks > 1 re-runs each checkpointed block over the micro-batch in that many
// chunks (CheckpointOptions::batch_chunks). cnn-granularity=conv checkpoints only
// conv + ReLU in each block and leaves the max-pool outside (what either changes:
// see the note).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include "data/dataset.h"
#include "memory/counting_allocator.h"
#include "memory/memory_categories.h"
#include "kernels/fused_attention.h"
#include "models/gradient_checkpoint.h"
#include "models/model.h"

namespace {

using Clock = std::chrono::steady_clock;
using Tensors = std::vector<torch::Tensor>;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// A model for the bench: a micro-batch's loss, with or without checkpointing.
class Subject {
public:
    virtual ~Subject() = default;
    virtual torch::Tensor loss(std::int64_t first, std::int64_t batch, bool checkpointed) = 0;
    virtual std::vector<torch::Tensor> parameters() = 0;
    virtual std::string describe() const = 0;
};

// The engine's CNN, its `features` Sequential run block by block.
class CnnSubject final : public Subject {
public:
    CnnSubject(std::int64_t samples, bool conv_only, accum::CheckpointOptions options)
        : conv_only_(conv_only), options_(options) {
        torch::manual_seed(1);
        data_.task = accum::Task::ImageClassification;
        data_.inputs = torch::rand({samples, 1, 28, 28});
        data_.labels = torch::randint(0, 10, {samples}, torch::kLong);
        data_.items_per_sample.assign(static_cast<std::size_t>(samples), 1);
        data_.num_classes = 10;
        data_.num_features = 784;
        accum::RunConfig config;
        config.model = accum::ModelKind::Cnn;
        model_ = accum::make_model(config, data_, accum::KernelSet(config.cpu_kernels, true));
        for (const auto& item : model_->named_children()) {
            if (item.key() == "features") features_ = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(item.value());
            if (item.key() == "head") head_ = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(item.value());
        }
        if (!features_ || !head_ || features_->size() != 6)
            throw std::runtime_error("the engine's CNN is not conv, ReLU, pool × 2 as this bench expects");
    }
    void count() {
        torch::NoGradGuard guard;
        for (auto& p : model_->parameters()) p.set_data(p.clone());
    }
    torch::Tensor loss(std::int64_t first, std::int64_t batch, bool checkpointed) override {
        const auto b = data_.gather(torch::arange(first, first + batch));
        auto x = b.input_ids;
        for (std::size_t block = 0; block < 2; ++block) {
            const std::size_t begin = 3 * block, end = begin + (conv_only_ && checkpointed ? 2 : 3);
            auto run = [seq = features_, begin, end](const torch::Tensor& in) {
                auto h = in;
                for (auto i = begin; i < end; ++i) h = (seq->begin() + static_cast<std::ptrdiff_t>(i))->forward(h);
                return h;
            };
            if (checkpointed) {
                Tensors params;
                for (auto i = begin; i < end; ++i)
                    for (const auto& p : features_->ptr(i)->parameters()) params.push_back(p);
                x = accum::checkpoint([run](const Tensors& in) { return Tensors{run(in[0])}; }, {x}, params, {}, options_)[0];
                for (auto i = end; i < begin + 3; ++i) x = (features_->begin() + static_cast<std::ptrdiff_t>(i))->forward(x);
            } else {
                x = run(x);
            }
        }
        const auto logits = head_->forward(x.flatten(1));
        return accum::cross_entropy(logits, b.labels, static_cast<double>(batch)).mean;
    }
    std::vector<torch::Tensor> parameters() override { return model_->parameters(); }
    std::string describe() const override {
        return model_->describe() + (conv_only_ ? ", checkpoint per conv + ReLU" : ", checkpoint per conv block") +
               (options_.batch_chunks > 1 ? " in " + std::to_string(options_.batch_chunks) + " chunks" : "");
    }

private:
    bool conv_only_;
    accum::CheckpointOptions options_;
    accum::TensorDataset data_;
    std::shared_ptr<accum::Model> model_;
    std::shared_ptr<torch::nn::SequentialImpl> features_, head_;
};

// The engine's MLP (784-256-128-10) on the LibTorch path (the fused operator is
// one node over all layers: see the note), each Linear + ReLU (+ dropout)
// checkpointed, the output layer not.
class MlpSubject final : public Subject {
public:
    MlpSubject(std::int64_t samples, double dropout, accum::CheckpointOptions options) : options_(options) {
        torch::manual_seed(1);
        data_.task = accum::Task::ImageClassification;
        data_.inputs = torch::rand({samples, 1, 28, 28});
        data_.labels = torch::randint(0, 10, {samples}, torch::kLong);
        data_.items_per_sample.assign(static_cast<std::size_t>(samples), 1);
        data_.num_classes = 10;
        data_.num_features = 784;
        accum::RunConfig config;
        config.model = accum::ModelKind::Mlp;
        config.dropout = dropout;
        model_ = accum::make_model(config, data_, accum::KernelSet(config.cpu_kernels, true));
        for (const auto& item : model_->named_children())
            if (item.key() == "body") body_ = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(item.value());
        if (!body_) throw std::runtime_error("the engine's MLP has no `body` Sequential");
        for (std::size_t i = 0; i < body_->size(); ++i)
            if (body_->ptr(i)->as<torch::nn::Linear>()) starts_.push_back(i);
        starts_.push_back(body_->size());
    }
    void count() {
        torch::NoGradGuard guard;
        for (auto& p : model_->parameters()) p.set_data(p.clone());
    }
    torch::Tensor loss(std::int64_t first, std::int64_t batch, bool checkpointed) override {
        const auto b = data_.gather(torch::arange(first, first + batch));
        auto x = b.input_ids.flatten(1);
        for (std::size_t l = 0; l + 1 < starts_.size(); ++l) {
            const auto begin = starts_[l], end = starts_[l + 1];
            auto run = [seq = body_, begin, end](const torch::Tensor& in) {
                auto h = in;
                for (auto i = begin; i < end; ++i) h = (seq->begin() + static_cast<std::ptrdiff_t>(i))->forward(h);
                return h;
            };
            if (checkpointed && l + 2 < starts_.size()) {
                Tensors params;
                for (auto i = begin; i < end; ++i)
                    for (const auto& p : body_->ptr(i)->parameters()) params.push_back(p);
                x = accum::checkpoint([run](const Tensors& in) { return Tensors{run(in[0])}; }, {x}, params, {}, options_)[0];
            } else {
                x = run(x);
            }
        }
        return accum::cross_entropy(x, b.labels, static_cast<double>(batch)).mean;
    }
    std::vector<torch::Tensor> parameters() override { return model_->parameters(); }
    std::string describe() const override {
        return model_->describe() + " (LibTorch path), checkpoint per layer" +
               (options_.batch_chunks > 1 ? " in " + std::to_string(options_.batch_chunks) + " chunks" : "");
    }

private:
    accum::CheckpointOptions options_;
    accum::TensorDataset data_;
    std::shared_ptr<accum::Model> model_;
    std::shared_ptr<torch::nn::SequentialImpl> body_;
    std::vector<std::size_t> starts_; // where each layer's modules begin in `body`, then its size
};

// transformer.cpp's encoder layer, as it is there (the engine's class is internal).
constexpr std::int64_t kModel = 64, kHeads = 4, kFeedForward = 128;

class EncoderLayerImpl final : public torch::nn::Module {
public:
    EncoderLayerImpl()
        : qkv_(register_module("qkv", torch::nn::Linear(kModel, 3 * kModel))),
          out_(register_module("out", torch::nn::Linear(kModel, kModel))),
          ff1_(register_module("ff1", torch::nn::Linear(kModel, kFeedForward))),
          ff2_(register_module("ff2", torch::nn::Linear(kFeedForward, kModel))),
          norm1_(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))),
          norm2_(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kModel})))),
          dropout_(register_module("dropout", torch::nn::Dropout(0.0))) {}

    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias) {
        const auto b = x.size(0), t = x.size(1);
        const auto packed = qkv_->forward(x);
        const double scale = 1.0 / std::sqrt(double(kModel / kHeads));
        torch::Tensor context;
        if (accum::fused_attention_available(packed, is_training() && dropout_->options.p() > 0.0)) {
            context = accum::fused_attention(packed, bias, kHeads, scale);
        } else {
            const auto qkv = packed.view({b, t, 3, kHeads, kModel / kHeads}).permute({2, 0, 3, 1, 4});
            const auto heads = b * kHeads;
            const auto scores = torch::baddbmm(bias.expand({b, kHeads, t, t}).reshape({heads, t, t}),
                                               qkv[0].reshape({heads, t, kModel / kHeads}),
                                               qkv[1].reshape({heads, t, kModel / kHeads}).transpose(1, 2), 1.0, scale)
                                    .view({b, kHeads, t, t});
            auto attn = dropout_->forward(torch::softmax(scores, -1));
            context = torch::matmul(attn, qkv[2]).transpose(1, 2).reshape({b, t, kModel});
        }
        auto h = norm1_->forward(x + dropout_->forward(out_->forward(context)));
        auto ff = ff2_->forward(dropout_->forward(torch::relu(ff1_->forward(h))));
        return norm2_->forward(h + dropout_->forward(ff));
    }

private:
    torch::nn::Linear qkv_, out_, ff1_, ff2_;
    torch::nn::LayerNorm norm1_, norm2_;
    torch::nn::Dropout dropout_;
};

class TransformerSubject final : public Subject, public torch::nn::Module {
public:
    TransformerSubject(int layers, accum::CheckpointOptions options) : options_(options) {
        data_ = accum::make_synthetic_pairs(1).train;
        torch::manual_seed(1);
        tokens_ = register_module("tokens", torch::nn::Embedding(data_.vocab_size, kModel));
        positions_ = register_module("positions", torch::nn::Embedding(data_.max_length, kModel));
        for (int i = 0; i < layers; ++i)
            layers_.push_back(register_module("layer" + std::to_string(i), std::make_shared<EncoderLayerImpl>()));
        head_ = register_module("head", torch::nn::Linear(kModel, data_.num_classes));
    }
    void count() {
        torch::NoGradGuard guard;
        for (auto& p : torch::nn::Module::parameters()) p.set_data(p.clone());
    }
    torch::Tensor loss(std::int64_t first, std::int64_t batch, bool checkpointed) override {
        const auto b = data_.gather(torch::arange(first, first + batch) % data_.size());
        const auto& ids = b.input_ids;
        const auto t = ids.size(1);
        auto x = tokens_->forward(ids) + positions_->forward(torch::arange(t, ids.options())).unsqueeze(0);
        const auto key_ok = b.attention_mask.to(torch::kBool);
        const auto bias = torch::zeros({ids.size(0), 1, 1, t}, x.options())
                              .masked_fill(key_ok.logical_not().view({ids.size(0), 1, 1, t}), -1e9);
        for (auto& layer : layers_) {
            if (checkpointed)
                x = accum::checkpoint(*layer, [layer](const Tensors& in) { return Tensors{layer->forward(in[0], in[1])}; },
                                      {x, bias}, options_)[0];
            else
                x = layer->forward(x, bias);
        }
        const auto mask = b.attention_mask.unsqueeze(-1).to(x.dtype());
        const auto logits = head_->forward((x * mask).sum(1) / mask.sum(1).clamp_min(1.0));
        return accum::cross_entropy(logits, b.labels, static_cast<double>(batch)).mean;
    }
    std::vector<torch::Tensor> parameters() override { return torch::nn::Module::parameters(); }
    std::string describe() const override {
        return "transformer d64 × " + std::to_string(layers_.size()) +
               " layers (engine's encoder layer), checkpoint per layer" +
               (options_.batch_chunks > 1 ? " in " + std::to_string(options_.batch_chunks) + " chunks" : "");
    }

private:
    accum::CheckpointOptions options_;
    accum::TensorDataset data_;
    torch::nn::Embedding tokens_{nullptr}, positions_{nullptr};
    std::vector<std::shared_ptr<EncoderLayerImpl>> layers_;
    torch::nn::Linear head_{nullptr};
};

struct Window {
    double seconds = 0;
    double forward = 0, backward = 0; // summed over the micro-batches
    std::int64_t peak_activations = 0;
    std::int64_t peak = 0;
};

// One optimizer step of K micro-batches as the engine runs it.
Window window(Subject& s, torch::optim::SGD& sgd, std::int64_t batch, std::int64_t k, std::int64_t& cursor,
              bool checkpointed) {
    const auto params = s.parameters();
    const c10::Device cpu(c10::kCPU);
    accum::memory::ActivationPeakMeter meter;
    Window w;
    accum::memory::reset_window_peak();
    const auto start = Clock::now();
    for (std::int64_t i = 0; i < k; ++i) {
        const auto t0 = Clock::now();
        auto loss = s.loss(cursor, batch, checkpointed) / static_cast<double>(k);
        const auto t1 = Clock::now();
        loss.backward();
        loss = torch::Tensor();
        w.forward += std::chrono::duration<double>(t1 - t0).count();
        w.backward += std::chrono::duration<double>(Clock::now() - t1).count();
        cursor += batch;
        meter.after_backward(accum::memory::cpu_counters().window_peak, accum::memory::static_memory(params, &sgd, cpu));
        accum::memory::reset_window_peak();
    }
    sgd.step();
    for (auto& p : params)
        if (p.grad().defined()) p.mutable_grad().reset();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    meter.after_step(accum::memory::cpu_counters().window_peak, accum::memory::static_memory(params, &sgd, cpu));
    const auto step = meter.take_step();
    w.seconds = seconds;
    w.peak_activations = step.peak_activations_bytes;
    w.peak = step.peak_bytes;
    return w;
}

void compare(Subject& s, int windows, std::int64_t batch, std::int64_t k, int threads) {
    torch::set_num_threads(threads);
    torch::optim::SGD sgd(s.parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    std::int64_t cursor = 0;
    // Warm-up: the optimizer state, the allocator's block cache, oneDNN's primitives.
    window(s, sgd, batch, k, cursor, false);
    window(s, sgd, batch, k, cursor, true);
    std::vector<double> t_plain, t_checked, f_plain, f_checked, b_plain, b_checked, paired;
    std::int64_t a_plain = 0, a_checked = 0, p_plain = 0, p_checked = 0;
    for (int w = 0; w < windows; ++w) {
        for (const bool checked : {w % 2 == 1, w % 2 == 0}) {
            const auto r = window(s, sgd, batch, k, cursor, checked);
            (checked ? t_checked : t_plain).push_back(r.seconds);
            (checked ? f_checked : f_plain).push_back(r.forward);
            (checked ? b_checked : b_plain).push_back(r.backward);
            (checked ? a_checked : a_plain) = std::max(checked ? a_checked : a_plain, r.peak_activations);
            (checked ? p_checked : p_plain) = std::max(checked ? p_checked : p_plain, r.peak);
        }
        paired.push_back(t_checked.back() / t_plain.back());
    }
    const auto fixed = accum::memory::static_memory(s.parameters(), &sgd, c10::Device(c10::kCPU));
    std::printf("%s, micro-batch %lld × %lld, %d thread(s), %d windows each\n", s.describe().c_str(), (long long)batch,
                (long long)k, threads, windows);
    std::printf("  parameters %.2f MiB, optimizer state %.2f MiB\n", fixed.parameters_bytes / 1048576.0,
                fixed.optimizer_state_bytes / 1048576.0);
    std::printf("  %-14s %12s %12s %12s %14s %14s\n", "", "window (ms)", "forward", "backward", "activations", "peak");
    std::printf("  %-14s %12.1f %12.1f %12.1f %10.2f MiB %10.2f MiB\n", "plain", 1e3 * median(t_plain),
                1e3 * median(f_plain), 1e3 * median(b_plain), a_plain / 1048576.0, p_plain / 1048576.0);
    std::printf("  %-14s %12.1f %12.1f %12.1f %10.2f MiB %10.2f MiB\n", "checkpointed", 1e3 * median(t_checked),
                1e3 * median(f_checked), 1e3 * median(b_checked), a_checked / 1048576.0, p_checked / 1048576.0);
    std::printf("  ratio: time %.2f × (median of paired windows %.2f ×), peak activations %.2f ×, peak %.2f ×\n\n",
                median(t_checked) / median(t_plain), median(paired), double(a_checked) / double(a_plain),
                double(p_checked) / double(p_plain));
}

} // namespace

int main(int argc, char** argv) {
    const std::string which = argc > 1 ? argv[1] : "all";
    const int windows = argc > 2 ? std::atoi(argv[2]) : 12;
    const std::int64_t batch = argc > 3 ? std::atoll(argv[3]) : 64;
    const std::int64_t k = argc > 4 ? std::atoll(argv[4]) : 4;
    const int threads = argc > 5 ? std::atoi(argv[5]) : 0;
    accum::CheckpointOptions options;
    options.batch_chunks = argc > 6 ? std::atoll(argv[6]) : 1;
    const std::string granularity = argc > 7 ? argv[7] : "block";
    if (windows < 1 || batch < 1 || k < 1 || options.batch_chunks < 1 ||
        (which != "all" && which != "cnn" && which != "transformer" && which != "mlp" && which != "mlp-dropout") ||
        (granularity != "block" && granularity != "conv")) {
        std::fprintf(stderr, "usage: memory_levers [all|cnn|transformer|mlp|mlp-dropout] [windows>=1] [batch>=1] [k>=1] [threads] [chunks>=1] [block|conv]\n");
        return 2;
    }
    try {
        accum::memory::install_counting_allocator();
        if (which == "mlp" || which == "mlp-dropout") {
            MlpSubject mlp(batch * k * (windows * 2 + 2), which == "mlp" ? 0.0 : 0.1, options);
            const accum::memory::CountingScope counting;
            mlp.count();
            compare(mlp, windows, batch, k, threads > 0 ? threads : 1);
            return 0;
        }
        if (which != "transformer") {
            CnnSubject cnn(batch * k * (windows * 2 + 2), granularity == "conv", options); // data uncounted
            const accum::memory::CountingScope counting;
            cnn.count();
            compare(cnn, windows, batch, k, threads > 0 ? threads : 2);
        }
        if (which != "cnn") {
            auto transformer = std::make_shared<TransformerSubject>(4, options);
            const accum::memory::CountingScope counting;
            transformer->count();
            compare(*transformer, windows, batch, k, threads > 0 ? threads : 1);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "memory_levers: %s\n", e.what());
        return 1;
    }
    return 0;
}
