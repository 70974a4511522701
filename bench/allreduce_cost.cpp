// What one gradient sync costs on Gloo between local processes, one thread
// each: the engine's bucketed average (GradientSync: copy into the 25 MiB
// bucket, one all-reduce, divide, copy back) of the real MLP's and CNN's
// gradients against the bare all-reduce of one flat buffer of the same size
// and against one all-reduce per tensor (what bucketing avoids). Rank 0 prints
// the median and the 10th / 90th percentiles per sync, in microseconds.
//
//   cmake --build build --target allreduce_cost
//   build/bench/allreduce_cost [ranks=2] [syncs=300]
//
// Started without RANK in its environment, it launches `ranks` copies of
// itself with the engine's launcher (as accum-run --nproc-per-node will) and
// waits for them. bench/allreduce_reference.py measures the same all-reduces
// with eager PyTorch's torch.distributed for comparison.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "accum/run_config.h"
#include "data/dataset.h"
#include "distributed/gradient_sync.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "models/model.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
    double p10, median, p90;
};

Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
    return {at(0.1), at(0.5), at(0.9)};
}

// The model's parameters as accum-run builds them for Fashion-MNIST (28 × 28, 10 classes).
std::vector<torch::Tensor> gradients_of(const std::string& model_name) {
    accum::RunConfig config;
    config.model = *accum::parse_choice<accum::ModelKind>(model_name);
    config.dataset = accum::DatasetKind::FashionMnist;
    accum::TensorDataset data;
    data.inputs = torch::zeros({1, 1, 28, 28});
    data.labels = torch::zeros({1}, torch::kLong);
    data.items_per_sample = {1};
    data.num_classes = 10;
    data.num_features = 28 * 28;
    const auto model = accum::make_model(config, data, accum::KernelSet(config.cpu_kernels));
    std::vector<torch::Tensor> grads;
    for (const auto& p : model->parameters()) grads.push_back(torch::randn_like(p));
    return grads;
}

template <class F>
std::vector<double> time_us(accum::dist::ProcessGroup& group, int syncs, F&& f) {
    for (int i = 0; i < 20; ++i) f(); // warm-up
    std::vector<double> out;
    for (int i = 0; i < syncs; ++i) {
        group.barrier(); // every rank starts the sync together
        const auto t = Clock::now();
        f();
        out.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
    }
    return out;
}

int worker(int syncs) {
    torch::set_num_threads(1);
    const auto world = accum::dist::world_from_environment();
    accum::dist::GroupOptions options;
    options.world = *world;
    options.backend = accum::dist::Backend::Gloo;
    options.timeout = std::chrono::seconds(60);
    auto group = accum::dist::ProcessGroup::connect(options);
    for (const std::string name : {"mlp", "cnn"}) {
        auto grads = gradients_of(name);
        std::int64_t numel = 0;
        for (const auto& g : grads) numel += g.numel();
        accum::dist::GradientSync sync(*group);
        const auto bucketed = time_us(*group, syncs, [&] { sync.average(grads); });
        auto flat = torch::randn({numel});
        const auto bare = time_us(*group, syncs, [&] { group->all_reduce(flat); });
        const auto per_tensor = time_us(*group, syncs, [&] {
            for (auto& g : grads) group->all_reduce(g);
        });
        if (group->rank() == 0) {
            std::printf("%s: %zu tensors, %lld floats (%.2f MB), %d ranks, %zu bucket(s)\n", name.c_str(), grads.size(),
                        static_cast<long long>(numel), numel * 4 / 1e6, group->world_size(), sync.buckets());
            for (const auto& [label, v] : {std::pair{"GradientSync::average (bucketed)", bucketed},
                                           std::pair{"one all-reduce of a flat buffer", bare},
                                           std::pair{"one all-reduce per tensor", per_tensor}}) {
                const auto s = stats(v);
                std::printf("  %-34s median %7.0f us  (p10 %6.0f, p90 %6.0f)\n", label, s.median, s.p10, s.p90);
            }
        }
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 2;
    const int syncs = argc > 2 ? std::atoi(argv[2]) : 300;
    if (std::getenv("RANK")) return worker(syncs);
    accum::dist::LaunchOptions launch;
    launch.executable = std::filesystem::read_symlink("/proc/self/exe").string();
    launch.arguments = {std::to_string(ranks), std::to_string(syncs)};
    launch.plan.nproc_per_node = ranks;
    launch.environment = {{"OMP_NUM_THREADS", "1"}};
    const auto result = accum::dist::launch_workers(launch);
    if (result.exit_code != 0) std::fprintf(stderr, "allreduce_cost: %s\n", result.message.c_str());
    return result.exit_code;
}
// SPDX-License-Identifier: GPL-3.0-or-later
