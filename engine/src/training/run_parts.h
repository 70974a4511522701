#pragma once
// The parts of a run, built from its config in one place: the device, the data
// and their loaders, the model, the optimizer, the schedule and the loss
// scaler, with the run's length in optimizer steps. A training run (RunContext),
// the memory estimate and the benchmarks all build them here, so what they
// measure is what trains.

#include <cstdint>
#include <memory>
#include <string>

#include <torch/types.h>

#include "accum/run_config.h"
#include "data/data_loader.h"
#include "data/dataset.h"
#include "models/model.h"
#include "training/lr_scheduler.h"
#include "training/optimizer.h"

namespace accum {

// The device `--device` names: cpu, auto (CUDA when there is a device) or
// cuda[:N]. Throws ConfigError (device_unavailable, device_missing) when it is
// not there, and when --mixed-precision cannot run on it (fp16 on the CPU that
// auto resolved to; bf16 on a CUDA device without it).
torch::Device resolve_run_device(const RunConfig& config);

// Which share of every epoch this process trains on (DistributedSampler's).
struct ShardOf {
    int rank = 0;
    int world_size = 1;
};

struct RunParts {
    RunParts() = default;
    RunParts(const RunParts&) = delete; // the loaders refer to `data`
    RunParts& operator=(const RunParts&) = delete;

    torch::Device device{torch::kCPU};
    DataSplits data;
    std::unique_ptr<DataLoader> train_loader;
    std::unique_ptr<DataLoader> eval_loader;
    std::shared_ptr<Model> model;
    std::unique_ptr<Optimizer> optimizer;
    std::unique_ptr<LrScheduler> lr_scheduler;
    std::unique_ptr<LossScaler> scaler;
    // The run's length: ceil(L / K) optimizer steps per epoch (the last partial
    // window of an epoch is flushed, not carried over), --max-steps or --epochs of them.
    std::int64_t updates_per_epoch = 0;
    std::int64_t total_updates = 0;
    std::int64_t num_epochs = 0;
};

// Builds every part, in this order: the data (uncounted, as a run loads them),
// the loaders (the training one sharded), the model from the config's seed on
// its device, the optimizer, the schedule and the scaler. Throws DataError
// (unreadable or empty data) and ConfigError (a device that is not there, a
// micro-batch larger than the data).
std::unique_ptr<RunParts> build_run_parts(const RunConfig& config, ShardOf shard = {});

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
