// Where the MLP's accumulation overhead goes: one optimizer step of (64, 4) against
// one of (256, 1), alternating in one process so both see the same machine, on the
// engine's own path (DataLoader::batch, Model::forward, loss / K, backward() with
// the gradients added in place as in a session, SGD momentum 0.9, zero_grad), then
// the fused MLP operator alone. Prints the median time of each phase per optimizer
// step and what each extra micro-batch costs.
//
//   cmake --build build --target step_breakdown
//   build/bench/step_breakdown [threads=2] [steps=400]
//
// Needs Fashion-MNIST (dataset-fashion-mnist). Each loader has its own seed, so the
// (256, 1) step never finds in cache the rows the (64, 4) step has just read.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include <torch/torch.h>

#include "data/data_loader.h"
#include "data/dataset.h"
#include "memory/counting_allocator.h"
#include "kernels/fused_dense.h"
#include "models/model.h"
#include "training/run_parts.h"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point& mark) {
    const auto now = Clock::now();
    const double us = std::chrono::duration<double, std::micro>(now - mark).count();
    mark = now;
    return us;
}

constexpr int kPhases = 4;
using Phases = std::array<double, kPhases>; // gather, forward, backward, optimizer (µs per step)
const char* const kPhaseNames[kPhases] = {"gather", "forward", "backward", "optimizer"};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Series {
    std::array<std::vector<double>, kPhases> phase;
    std::vector<double> total;
    void add(const Phases& p) {
        double sum = 0;
        for (int i = 0; i < kPhases; ++i) {
            phase[i].push_back(p[i]);
            sum += p[i];
        }
        total.push_back(sum);
    }
};

} // namespace

int main(int argc, char** argv) try {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 400;
    if (threads < 1 || steps < 1) {
        std::fprintf(stderr, "usage: step_breakdown [threads ≥ 1] [steps ≥ 1]\n");
        return 2;
    }
    torch::set_num_threads(threads);
    accum::memory::install_counting_allocator(); // as in a session
    const accum::memory::CountingScope counting;

    accum::RunConfig config;
    config.model = accum::ModelKind::Mlp;
    config.dataset = accum::DatasetKind::FashionMnist;
    config.cpu_kernels = accum::CpuKernels::Fused;
    config.optimizer = accum::OptimizerKind::Sgd;
    config.learning_rate = 0.01;
    config.momentum = 0.9;
    config.device = "cpu";
    // The run's parts as a session builds them (the fused kernels add the
    // gradients into .grad); a second loader of micro-batch 256 beside its own.
    const auto parts = accum::build_run_parts(config);
    const auto& data = parts->data;
    auto& model = parts->model;
    const auto params = model->parameters();
    auto& optimizer = *parts->optimizer;
    accum::DataLoader small(data.train, 64, true, 1), big(data.train, 256, true, 2);
    small.set_epoch(0);
    big.set_epoch(0);
    std::int64_t small_next = 0, big_next = 0;

    auto step = [&](accum::DataLoader& loader, std::int64_t& next, int k) {
        Phases p{};
        auto mark = Clock::now();
        double window_loss = 0.0;
        for (int i = 0; i < k; ++i) {
            const auto batch = loader.batch(next);
            next = (next + 1) % (loader.size() - 1); // whole batches only
            p[0] += us_since(mark);
            const auto outputs = model->forward(batch);
            const auto loss = outputs.loss / static_cast<double>(k);
            p[1] += us_since(mark);
            loss.backward();
            window_loss += *outputs.loss.data_ptr<float>(); // read on the CPU, as the engine does
            p[2] += us_since(mark);
        }
        volatile double read = window_loss;
        (void)read;
        optimizer.step();
        for (auto& param : params) param.mutable_grad().reset(); // zero_grad(set_to_none=True), as the engine
        p[3] += us_since(mark);
        return p;
    };

    Series accumulated, single;
    for (int i = 0; i < 30 + steps; ++i) { // 30 steps of warm-up
        const auto a = step(small, small_next, 4);
        const auto b = step(big, big_next, 1);
        if (i >= 30) accumulated.add(a), single.add(b);
    }
    std::printf("engine path, %d thread(s), %d steps each, median µs per optimizer step:\n", threads, steps);
    std::printf("  %-10s %9s %9s %12s\n", "phase", "64 x 4", "256 x 1", "per extra mb");
    for (int i = 0; i < kPhases; ++i) {
        const double a = median(accumulated.phase[i]), b = median(single.phase[i]);
        std::printf("  %-10s %9.0f %9.0f %12.1f\n", kPhaseNames[i], a, b, (a - b) / 3);
    }
    const double ta = median(accumulated.total), tb = median(single.total);
    std::printf("  %-10s %9.0f %9.0f %12.1f   samples/s ratio (64,4)/(256,1): %.3f\n", "step", ta, tb,
                (ta - tb) / 3, tb / ta);

    // The fused MLP operator alone: forward and backward on fixed inputs.
    std::vector<torch::Tensor> layers;
    const std::int64_t widths[] = {784, 256, 128, 10};
    for (int l = 0; l < 3; ++l) {
        layers.push_back((torch::randn({widths[l + 1], widths[l]}) * 0.05).requires_grad_());
        layers.push_back(torch::zeros({widths[l + 1]}).requires_grad_());
    }
    const auto x_small = torch::randn({64, 784}), x_big = torch::randn({256, 784});
    const auto up_small = torch::randn({64, 10}), up_big = torch::randn({256, 10});
    std::vector<double> fa, ba, fb, bb;
    auto op = [&](const torch::Tensor& x, const torch::Tensor& up, int k, std::vector<double>& f,
                  std::vector<double>& b) {
        for (auto& p : layers)
            if (p.grad().defined()) p.mutable_grad().zero_();
        double fs = 0, bs = 0;
        auto mark = Clock::now();
        for (int i = 0; i < k; ++i) {
            const auto out = accum::fused_dense(x, layers, /*gradients_in_place=*/true);
            fs += us_since(mark);
            out.backward(up);
            bs += us_since(mark);
        }
        f.push_back(fs);
        b.push_back(bs);
    };
    for (int i = 0; i < 30 + steps; ++i) {
        op(x_small, up_small, 4, fa, ba);
        op(x_big, up_big, 1, fb, bb);
    }
    fa.erase(fa.begin(), fa.begin() + 30), ba.erase(ba.begin(), ba.begin() + 30);
    fb.erase(fb.begin(), fb.begin() + 30), bb.erase(bb.begin(), bb.begin() + 30);
    std::printf("fused MLP operator alone, median µs per optimizer step:\n");
    std::printf("  %-10s %9.0f %9.0f %12.1f\n", "forward", median(fa), median(fb), (median(fa) - median(fb)) / 3);
    std::printf("  %-10s %9.0f %9.0f %12.1f\n", "backward", median(ba), median(bb), (median(ba) - median(bb)) / 3);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "step_breakdown: %s\n", e.what());
    return 1;
}
// SPDX-License-Identifier: GPL-3.0-or-later
