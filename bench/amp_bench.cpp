// Mixed precision on the CPU with LibTorch: what runs, and how fast.
//
//   cmake --build build --target amp_bench
//   build/bench/amp_bench probe
//       The engine's three models under CPU bf16 autocast (training::AutocastScope):
//       the dtype of the logits and of the loss, whether the fused CPU kernels
//       (kernels/fused_*.h) or ATen ran (the autograd nodes of the graph), and how far
//       the gradients are from fp32's.
//   build/bench/amp_bench speed THREADS ROUNDS
//       Samples/s of training windows of 64 × 4 (forward, loss / 4, backward, and
//       SGD momentum 0.9 once per window), fp32 against bf16 autocast, alternating
//       A B A B in one process, for a plain LibTorch MLP 784-256-128-10 and 2-conv
//       CNN (torch::nn modules, F::cross_entropy: eager LibTorch) and for the
//       engine's own models (fused kernels where they serve). One JSON line per
//       measurement. bench/amp_speed.py runs it beside eager PyTorch.
//
// Needs Fashion-MNIST (dataset-fashion-mnist).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include "data/dataset.h"
#include "kernels/kernels.h"
#include "models/model.h"
#include "training/mixed_precision.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace F = torch::nn::functional;

constexpr std::int64_t kBatch = 64, kSteps = 4; // micro-batch × accumulation steps

// Plain LibTorch, as eager PyTorch writes them (bench/eager_reference.py).
torch::nn::Sequential plain_mlp() {
    return torch::nn::Sequential(torch::nn::Flatten(), torch::nn::Linear(784, 256), torch::nn::ReLU(),
                                 torch::nn::Linear(256, 128), torch::nn::ReLU(), torch::nn::Linear(128, 10));
}

torch::nn::Sequential plain_cnn() {
    using namespace torch::nn;
    return Sequential(Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2),
                      Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2), Flatten(),
                      Linear(64 * 7 * 7, 128), ReLU(), Linear(128, 10));
}

// The names of the autograd nodes behind `t`, each once.
std::set<std::string> graph_nodes(const torch::Tensor& t) {
    std::set<std::string> names;
    std::vector<torch::autograd::Node*> stack{t.grad_fn().get()};
    std::set<torch::autograd::Node*> seen;
    while (!stack.empty()) {
        auto* node = stack.back();
        stack.pop_back();
        if (node == nullptr || !seen.insert(node).second) continue;
        names.insert(node->name());
        for (const auto& edge : node->next_edges()) stack.push_back(edge.function.get());
    }
    return names;
}

// Our fused operators appear as torch::autograd::CppNode<accum::(anonymous namespace)::FusedX>.
std::string fused_nodes(const std::set<std::string>& names) {
    std::string out;
    for (const auto& n : names)
        if (const auto at = n.find("Fused"); at != std::string::npos)
            out += (out.empty() ? "" : ", ") + n.substr(at, n.find('>', at) - at);
    return out.empty() ? "none (ATen)" : out;
}

int probe() {
    torch::manual_seed(0);
    const auto images = accum::load_fashion_mnist(accum::default_fashion_mnist_dir());
    const auto pairs = accum::make_synthetic_pairs(0, 256, 64);
    struct Case {
        const char* model;
        accum::ModelKind kind;
        const accum::TensorDataset* data;
    };
    for (const Case& c : {Case{"mlp", accum::ModelKind::Mlp, &images.train},
                          Case{"cnn", accum::ModelKind::Cnn, &images.train},
                          Case{"transformer", accum::ModelKind::Transformer, &pairs.train}}) {
        accum::RunConfig config;
        config.model = c.kind;
        torch::manual_seed(1);
        // Gradients returned (not added in place): autograd::grad reads them.
        const auto model = accum::make_model(config, *c.data, accum::KernelSet(accum::CpuKernels::Fused, false));
        const auto params = model->parameters();
        std::vector<std::int64_t> rows(kBatch);
        for (std::int64_t i = 0; i < kBatch; ++i) rows[i] = i;
        const auto batch = c.data->gather(rows);
        std::vector<torch::Tensor> grads[2];
        for (int bf16 = 0; bf16 < 2; ++bf16) {
            accum::ModelOutput out;
            {
                accum::AutocastScope autocast(c10::DeviceType::CPU,
                                              bf16 ? accum::MixedPrecision::Bf16 : accum::MixedPrecision::No);
                out = model->forward(batch);
            }
            grads[bf16] = torch::autograd::grad({out.loss}, params);
            std::printf("%-11s %-4s logits %-8s loss %-6s fused nodes: %s\n", c.model, bf16 ? "bf16" : "fp32",
                        c10::toString(out.logits.scalar_type()), c10::toString(out.loss.scalar_type()),
                        fused_nodes(graph_nodes(out.loss)).c_str());
            if (bf16) {
                std::string kinds;
                for (const auto& n : graph_nodes(out.loss)) kinds += n + " ";
                std::printf("%-11s      graph: %s\n", "", kinds.c_str());
            }
        }
        double worst = 0;
        for (std::size_t i = 0; i < params.size(); ++i) {
            const double norm = grads[0][i].norm().item<double>();
            const double diff = (grads[1][i] - grads[0][i]).norm().item<double>();
            worst = std::max(worst, norm > 0 ? diff / norm : diff);
        }
        std::printf("%-11s      largest relative gradient difference bf16 vs fp32, over the parameters: %.3g\n\n",
                    c.model, worst);
    }
    return 0;
}

// One training run of `windows` windows; returns samples/s.
using Window = std::function<void()>;

double samples_per_second(const Window& window, int windows) {
    for (int i = 0; i < 3; ++i) window(); // warm-up: oneDNN builds its bf16 primitives on first use
    const auto start = Clock::now();
    for (int i = 0; i < windows; ++i) window();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    return static_cast<double>(windows * kSteps * kBatch) / s;
}

int speed(int threads, int rounds) {
    torch::set_num_threads(threads);
    torch::manual_seed(0);
    const auto data = accum::load_fashion_mnist(accum::default_fashion_mnist_dir());
    std::vector<accum::Batch> batches;
    for (std::int64_t b = 0; b < 32; ++b) {
        std::vector<std::int64_t> rows;
        for (std::int64_t i = 0; i < kBatch; ++i) rows.push_back(b * kBatch + i);
        batches.push_back(data.train.gather(rows));
    }

    struct Config {
        std::string name; // model/implementation
        std::function<torch::Tensor(const accum::Batch&)> loss;
        std::vector<torch::Tensor> params;
        int windows;
    };
    std::vector<Config> configs;
    auto mlp = plain_mlp(), cnn = plain_cnn();
    configs.push_back({"mlp/libtorch", [mlp](const accum::Batch& b) mutable {
                           return F::cross_entropy(mlp->forward(b.input_ids), b.labels);
                       }, mlp->parameters(), 150});
    configs.push_back({"cnn/libtorch", [cnn](const accum::Batch& b) mutable {
                           return F::cross_entropy(cnn->forward(b.input_ids), b.labels);
                       }, cnn->parameters(), 12});
    for (const char* name : {"mlp", "cnn"}) {
        accum::RunConfig config;
        config.model = std::string(name) == "mlp" ? accum::ModelKind::Mlp : accum::ModelKind::Cnn;
        // Gradients added in place, as a session trains the engine's models.
        auto model = accum::make_model(config, data.train, accum::KernelSet(accum::CpuKernels::Fused, true));
        configs.push_back({std::string(name) + "/engine", [model](const accum::Batch& b) { return model->forward(b).loss; },
                           model->parameters(), std::string(name) == "mlp" ? 150 : 12});
    }

    for (int round = 0; round < rounds; ++round)
        for (auto& c : configs)
            for (const auto precision : {accum::MixedPrecision::No, accum::MixedPrecision::Bf16}) {
                torch::optim::SGD sgd(c.params, torch::optim::SGDOptions(0.01).momentum(0.9));
                std::size_t next = 0;
                auto window = [&] {
                    for (int i = 0; i < kSteps; ++i) {
                        torch::Tensor loss;
                        {
                            accum::AutocastScope autocast(c10::DeviceType::CPU, precision);
                            loss = c.loss(batches[next]) / static_cast<double>(kSteps);
                        }
                        next = (next + 1) % batches.size();
                        loss.backward();
                    }
                    sgd.step();
                    sgd.zero_grad();
                };
                const double sps = samples_per_second(window, c.windows);
                std::printf("{\"impl\": \"cpp\", \"config\": \"%s\", \"precision\": \"%s\", \"threads\": %d, "
                            "\"round\": %d, \"samples_per_second\": %.1f}\n",
                            c.name.c_str(), accum::to_string(precision), threads, round, sps);
                std::fflush(stdout);
            }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    try {
        if (mode == "probe") return probe();
        if (mode == "speed") {
            const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
            const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
            if (threads >= 1 && rounds >= 1) return speed(threads, rounds);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "amp_bench: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: amp_bench probe | amp_bench speed THREADS>=1 ROUNDS>=1\n");
    return 2;
}
// SPDX-License-Identifier: GPL-3.0-or-later
