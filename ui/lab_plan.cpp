// SPDX-License-Identifier: GPL-3.0-or-later
// The runs an experiment of the lab makes from the studio's configuration
// (plan_experiment, lab_plan.h): plain functions, no widget.
#include "lab_plan.h"

#include "lab_panel.h" // LabPanel::tr: the runs' labels keep their translation context

#include <algorithm>
#include <cmath>

#include "accum/run_estimate.h"

namespace studio {

namespace {

accum::RunConfig lab_base(const accum::RunConfig& c) {
    accum::RunConfig b = c;
    b.record_micro_steps = false;
    b.micro_step_delay_s = 0.0;
    b.quiet = true;
    b.keep_threads = true; // runs compared side by side: one thread count each, start to end
    b.output_dir.clear();
    b.metrics_file.clear();
    b.resume_from.clear();
    b.memory_budget = "0";
    b.auto_find_batch_size = false;
    b.save_strategy = accum::Strategy::No;
    b.save_steps = 0; // --save-steps only goes with --save-strategy steps
    b.scheduler_per_micro_batch = false;
    b.scaler_per_micro_batch = false;
    if (b.eval_strategy == accum::Strategy::Steps) { // --eval-steps goes with it (validate() refuses it alone)
        b.eval_strategy = accum::Strategy::Epoch;
        b.eval_steps = 0;
    }
    return b;
}

// Full accumulation windows in the first epoch for micro-batch b and K k: the
// data's real size (a tensors or CSV file is read once per experiment).
std::int64_t full_windows(const accum::RunConfig& c, std::int64_t b, std::int64_t k) {
    const auto n = accum::training_samples(c);
    if (n <= 0 || b <= 0 || k <= 0) return 1 << 20;
    const auto micro_batches = (n + b - 1) / b;
    return std::max<std::int64_t>(1, micro_batches / k);
}

// Length of a lab run: the configured max steps (else 60), kept inside the
// first epoch so every window is full (L % K does not matter then).
void set_length(accum::RunConfig& c, std::int64_t default_steps, std::int64_t cap) {
    std::int64_t steps = c.max_steps > 0 ? c.max_steps : default_steps;
    steps = std::min({steps, default_steps * 4, cap});
    c.max_steps = std::max<std::int64_t>(1, steps);
    c.epochs = 0;
}


} // namespace

namespace {

// A pitfall demo's two runs: `base` as it is, then with the switch `pitfall` on.
void push_with_and_without(std::vector<PlannedRun>& runs, const accum::RunConfig& base, bool accum::RunConfig::*pitfall,
                           const QString& without, const QString& with) {
    auto on = base;
    on.*pitfall = true;
    runs.push_back({without, base});
    runs.push_back({with, on});
}

// The dataset Fashion-MNIST (another dataset's --data path does not carry over).
void use_fashion_mnist(accum::RunConfig& base) {
    if (base.dataset != accum::DatasetKind::FashionMnist) base.data_path.clear();
    base.dataset = accum::DatasetKind::FashionMnist;
}

// Powers of two at most and at least `x` (1 at least).
std::int64_t floor_pow2(double x) {
    std::int64_t p = 1;
    while (double(p * 2) <= x) p *= 2;
    return p;
}
std::int64_t ceil_pow2(double x) {
    std::int64_t p = 1;
    while (double(p) < x) p *= 2;
    return p;
}

// Two effective batches of one micro-batch m, m × 2 at most noise/margin and
// m × K at least noise × margin, on the same samples: the big run's steps times
// its effective batch, the small run as many samples in more steps.
void plan_noise_scale(std::vector<PlannedRun>& runs, accum::RunConfig base, double noise_scale) {
    if (!(noise_scale > 0)) noise_scale = kDefaultNoiseScale;
    const auto world = std::max<std::int64_t>(1, base.world_size());
    const std::int64_t m = std::max<std::int64_t>(1, floor_pow2(noise_scale / kNoiseScaleMargin / 2.0 / double(world)));
    const std::int64_t k_small = 2;
    std::int64_t k_big = std::max<std::int64_t>(4, ceil_pow2(noise_scale * kNoiseScaleMargin / double(m * world)));
    // Inside the first epoch: a data set too small for the big batch's windows gets a smaller K.
    while (k_big > 4 && full_windows(base, m * world, k_big) < 2) k_big /= 2;
    const std::int64_t big_steps = std::clamp<std::int64_t>(base.max_steps > 0 ? base.max_steps : 10, 1,
                                                             full_windows(base, m * world, k_big));
    base.batch_size = m;
    base.epochs = 0;
    auto small = base, big = base;
    small.accumulation_steps = k_small;
    small.max_steps = big_steps * (k_big / k_small);
    big.accumulation_steps = k_big;
    big.max_steps = big_steps;
    runs.push_back({LabPanel::tr("%1 × %2 = %3 (small)").arg(m).arg(k_small).arg(small.effective_batch()), small});
    runs.push_back({LabPanel::tr("%1 × %2 = %3 (big)").arg(m).arg(k_big).arg(big.effective_batch()), big});
}

} // namespace

std::vector<PlannedRun> plan_experiment(Experiment experiment, const accum::RunConfig& config, double noise_scale,
                                        const ExperimentShapes& named_shapes) {
    auto base = lab_base(config);
    const auto B = base.batch_size, K = base.accumulation_steps;
    std::vector<PlannedRun> runs;
    switch (experiment) {
    case Experiment::CompareStyles: {
        set_length(base, 60, full_windows(base, B, K));
        const std::pair<accum::Mode, QString> styles[] = {{accum::Mode::Pytorch, LabPanel::tr("PyTorch loop")},
                                                          {accum::Mode::Accelerator, LabPanel::tr("Accelerator")},
                                                          {accum::Mode::Trainer, LabPanel::tr("Trainer")}};
        for (const auto& [mode, label] : styles) {
            auto c = base;
            c.mode = mode;
            runs.push_back({label, c});
        }
        break;
    }
    case Experiment::CompareAccumulation: {
        ExperimentShapes shapes = named_shapes;
        if (shapes.empty()) {
            shapes = {{B * K, 1}, {B, K}};
            if (B >= 2 && B % 2 == 0) shapes.emplace_back(B / 2, 2 * K);
        }
        std::int64_t cap = 1 << 20;
        for (const auto& [b, k] : shapes) cap = std::min(cap, full_windows(base, b, k));
        set_length(base, 60, cap);
        for (const auto& [b, k] : shapes) {
            auto c = base;
            c.batch_size = b;
            c.accumulation_steps = k;
            runs.push_back({LabPanel::tr("B=%1 × K=%2").arg(b).arg(k), c});
        }
        break;
    }
    case Experiment::PitfallBatchNorm: {
        if (base.model == accum::ModelKind::Transformer) base.model = accum::ModelKind::Mlp;
        if (base.dataset == accum::DatasetKind::SyntheticLm) base.dataset = accum::DatasetKind::SyntheticPairs;
        base.batch_norm = true;
        base.dropout = 0.0;
        set_length(base, 40, std::min(full_windows(base, B * K, 1), full_windows(base, B, K)));
        auto big = base;
        big.batch_size = B * K;
        big.accumulation_steps = 1;
        runs.push_back({LabPanel::tr("BatchNorm, one batch of %1").arg(B * K), big});
        runs.push_back({LabPanel::tr("BatchNorm, %1 × %2 accumulated").arg(B).arg(K), base});
        break;
    }
    case Experiment::PitfallTokenLoss: {
        base.dataset = accum::DatasetKind::SyntheticLm;
        base.model = accum::ModelKind::Transformer;
        base.batch_norm = false;
        base.data_path.clear();
        // One sequence per micro-batch and K = 16: the per-micro-batch mean then weighs
        // every sequence alike, and the gap from the reference is large enough to see
        // on the loss axis (larger micro-batches hide it). Measured gaps:
        // bench/STUDIO_MEASUREMENTS.md.
        const std::int64_t b = 1, k = 16;
        base.batch_size = b;
        base.accumulation_steps = k;
        if (base.optimizer == accum::OptimizerKind::Sgd && base.learning_rate < 0.1) base.learning_rate = 0.1;
        set_length(base, 20, std::min(full_windows(base, b * k, 1), full_windows(base, b, k)));
        auto reference = base;
        reference.batch_size = b * k;
        reference.accumulation_steps = 1;
        reference.loss_normalization = accum::LossNormalization::Tokens;
        auto naive = base;
        naive.loss_normalization = accum::LossNormalization::Mean;
        auto tokens = base;
        tokens.loss_normalization = accum::LossNormalization::Tokens;
        runs.push_back({LabPanel::tr("one batch of %1 (reference)").arg(b * k), reference});
        runs.push_back({LabPanel::tr("%1 × %2, mean per micro-batch (wrong)").arg(b).arg(k), naive});
        runs.push_back({LabPanel::tr("%1 × %2, token-normalised (right)").arg(b).arg(k), tokens});
        break;
    }
    case Experiment::NoSyncVsSyncEach: {
        // N processes on this machine (at least two): each takes its shard, so a
        // window of K micro-batches of B per rank covers B·K·N samples.
        base.nproc_per_node = std::max(2, base.nproc_per_node);
        base.nnodes = 1;
        base.node_rank = 0;
        const std::int64_t n = base.world_size();
        set_length(base, 30, full_windows(base, B * n, K));
        push_with_and_without(runs, base, &accum::RunConfig::sync_each_micro_batch, LabPanel::tr("no_sync"),
                              LabPanel::tr("sync every micro-batch"));
        break;
    }
    case Experiment::MemoryLevers: {
        // The CNN on Fashion-MNIST: its activations dwarf its parameters, so the bands show.
        use_fashion_mnist(base);
        base.model = accum::ModelKind::Cnn;
        base.batch_norm = false;
        base.dropout = 0.0;
        set_length(base, 30, std::min(full_windows(base, 256, 1), full_windows(base, 64, 4)));
        const std::tuple<std::int64_t, std::int64_t, bool> shapes[] = {
            {256, 1, false}, {64, 4, false}, {256, 1, true}, {64, 4, true}};
        for (const auto& [b, k, checkpointing] : shapes) {
            auto c = base;
            c.batch_size = b;
            c.accumulation_steps = k;
            c.gradient_checkpointing = checkpointing;
            runs.push_back({checkpointing ? LabPanel::tr("%1 × %2, checkpointing").arg(b).arg(k)
                                          : LabPanel::tr("%1 × %2").arg(b).arg(k),
                            c});
        }
        break;
    }
    case Experiment::PitfallScheduler: {
        base.mode = accum::Mode::Pytorch;
        base.scheduler = accum::SchedulerKind::Linear;
        base.warmup_steps = 0;
        set_length(base, 60, full_windows(base, B, K));
        push_with_and_without(runs, base, &accum::RunConfig::scheduler_per_micro_batch,
                              LabPanel::tr("scheduler per update (right)"), LabPanel::tr("scheduler per micro-batch (wrong)"));
        break;
    }
    case Experiment::PitfallLossScale: {
        // An overflow the loss scaler must answer, provoked without injection. fp32
        // gradients are mostly below 1, so only a scale near float32's largest
        // overflows them: at 3.4e38 an element above 1 does, and SGD at lr 0.1 has
        // such spikes, so the right loop skips a window or two
        // (bench/STUDIO_MEASUREMENTS.md).
        base.mode = accum::Mode::Pytorch;
        use_fashion_mnist(base);
        if (base.model == accum::ModelKind::Transformer) base.model = accum::ModelKind::Mlp;
        base.batch_norm = false;
        base.dropout = 0.0;
        base.optimizer = accum::OptimizerKind::Sgd;
        base.learning_rate = std::max(base.learning_rate, 0.1);
        base.loss_scaling = accum::LossScaling::Dynamic;
        base.loss_scale_init = kOverflowLossScale;
        if (base.accumulation_steps < 2) base.accumulation_steps = 4;
        set_length(base, 40, full_windows(base, base.batch_size, base.accumulation_steps));
        push_with_and_without(runs, base, &accum::RunConfig::scaler_per_micro_batch,
                              LabPanel::tr("scaler per window (right)"), LabPanel::tr("scaler per micro-batch (wrong)"));
        break;
    }
    case Experiment::NoiseScale: plan_noise_scale(runs, base, noise_scale); break;
    }
    return runs;
}

} // namespace studio
