// Gradient checkpointing against none, side by side in one process: the peak of
// activations in an optimizer step (ActivationPeakMeter on the counting
// allocator, as a run's step records report it) and the step time, at
// micro-batch B × K, for the engine's own models (make_model, the fused CPU
// kernels, --gradient-checkpointing switched per window):
//   cnn          conv32-conv64-fc128 on 28 × 28 images; the first conv block
//                (conv, fused ReLU + max-pool) checkpointed, the second run in
//                chunks with its graph kept, both in chunks whose convolution
//                output stays under kCheckpointChunkBytes (ACCUM_CHECKPOINT_CHUNK_BYTES=N
//                to try others; ACCUM_CNN_CHECKPOINT=checkpoint,checkpoint for
//                other policies: plain, chunks or checkpoint per block);
//   transformer  d 64, 4 heads, feed-forward 128, `layers` encoder layers (4)
//                on synthetic-pairs; each layer checkpointed;
//   mlp          784-256-128-10 as the fused dense stack: the stack checkpointed whole;
//   mlp-aten     the same on LibTorch's operators (--cpu-kernels aten): per layer;
//   mlp-dropout  with dropout 0.1 (LibTorch's operators): per layer;
//   cnn-aten     the CNN on LibTorch's operators (--cpu-kernels aten: relu and
//                max_pool2d, oneDNN's first convolution), for comparison.
// Windows alternate plain / checkpointed so both see the same machine; SGD
// momentum 0.9, zero_grad(set_to_none) as the engine does. Prints, per model, the
// median window time and the largest peak of activations of each, and their
// ratios (bench/MEMORY_LEVERS.md).
//
//   cmake --build build --target memory_levers
//   build/bench/memory_levers [model=all|cnn|cnn-aten|transformer|mlp|mlp-aten|mlp-dropout] [windows=12] [batch=64] [k=4]
//                             [threads=0: cnn 2, others 1] [layers=4]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include "data/dataset.h"
#include "memory/counting_allocator.h"
#include "memory/memory_categories.h"
#include "models/model.h"

namespace {

using Clock = std::chrono::steady_clock;
using Tensors = std::vector<torch::Tensor>;

// The machine's load average over the last minute (it is shared: say how busy it was).
double load_average() {
    double load = -1;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = -1;
        std::fclose(f);
    }
    return load;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// One of the engine's models on data of its kind, its parameters in counted storage.
class Subject {
public:
    Subject(const std::string& which, std::int64_t samples, int layers) {
        accum::RunConfig config;
        torch::manual_seed(1);
        if (which == "transformer") {
            config.model = accum::ModelKind::Transformer;
            config.dataset = accum::DatasetKind::SyntheticPairs;
            config.transformer_layers = layers;
            data_ = accum::make_synthetic_pairs(1).train;
        } else {
            config.model = which.rfind("cnn", 0) == 0 ? accum::ModelKind::Cnn : accum::ModelKind::Mlp;
            if (which == "mlp-aten" || which == "cnn-aten") config.cpu_kernels = accum::CpuKernels::Aten;
            if (which == "mlp-dropout") config.dropout = 0.1;
            data_.task = accum::Task::ImageClassification;
            data_.inputs = torch::rand({samples, 1, 28, 28});
            data_.labels = torch::randint(0, 10, {samples}, torch::kLong);
            data_.items_per_sample.assign(static_cast<std::size_t>(samples), 1);
            data_.num_classes = 10;
            data_.num_features = 784;
        }
        model_ = accum::make_model(config, data_, accum::KernelSet(config.cpu_kernels, true));
        model_->train();
        describe_ = model_->describe() + (which == "mlp" ? " (fused dense stack, checkpointed whole)"
                                          : which == "mlp-aten" || which == "mlp-dropout"
                                              ? " (LibTorch operators, per layer)"
                                          : which == "cnn-aten" ? " (LibTorch operators: relu, max_pool2d, oneDNN conv)"
                                                                : "");
        if (which.rfind("cnn", 0) == 0) {
            const char* policy = std::getenv("ACCUM_CNN_CHECKPOINT");
            describe_ += ", blocks " + std::string(policy && *policy ? policy : "as cnn.cpp's policy") + ", 64 images in " +
                         std::to_string(accum::checkpoint_chunks(64, 32 * 28 * 28 * 4)) + " and " +
                         std::to_string(accum::checkpoint_chunks(64, 64 * 14 * 14 * 4)) + " chunks";
        }
    }
    void count() {
        torch::NoGradGuard guard;
        for (auto& p : model_->parameters()) p.set_data(p.clone());
    }
    torch::Tensor loss(std::int64_t first, std::int64_t batch, bool checkpointed) {
        model_->set_gradient_checkpointing(checkpointed);
        const auto b = data_.gather(torch::arange(first, first + batch) % data_.size());
        return (*model_)(b).loss;
    }
    std::vector<torch::Tensor> parameters() { return model_->parameters(); }
    std::string describe() const { return describe_; }

private:
    accum::TensorDataset data_;
    std::shared_ptr<accum::Model> model_;
    std::string describe_;
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
    const double load_before = load_average();
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
    std::printf("%s, micro-batch %lld × %lld, %d thread(s), %d windows each, load average %.1f → %.1f\n",
                s.describe().c_str(), (long long)batch, (long long)k, threads, windows, load_before, load_average());
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
    const int layers = argc > 6 ? std::atoi(argv[6]) : 4;
    const std::vector<std::string> known{"cnn", "cnn-aten", "transformer", "mlp", "mlp-aten", "mlp-dropout"};
    if (windows < 1 || batch < 1 || k < 1 || layers < 1 ||
        (which != "all" && std::find(known.begin(), known.end(), which) == known.end())) {
        std::fprintf(stderr, "usage: memory_levers [all|cnn|cnn-aten|transformer|mlp|mlp-aten|mlp-dropout] [windows>=1] "
                             "[batch>=1] [k>=1] [threads] [layers>=1]\n");
        return 2;
    }
    try {
        accum::memory::install_counting_allocator();
        for (const auto& name : known) {
            if (which != name && !(which == "all" && (name == "cnn" || name == "transformer"))) continue;
            Subject subject(name, batch * k * (windows * 2 + 2), layers); // the data uncounted
            const accum::memory::CountingScope counting;
            subject.count();
            compare(subject, windows, batch, k, threads > 0 ? threads : name.rfind("cnn", 0) == 0 ? 2 : 1);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "memory_levers: %s\n", e.what());
        return 1;
    }
    return 0;
}
// SPDX-License-Identifier: GPL-3.0-or-later
