#pragma once
// A Transformers-style Trainer for one process, mirroring trainer.py's inner
// training loop: ceil(L / K) updates per epoch, a partial last window divided by
// its real size, num_items_in_batch for token-level losses, logging, evaluation
// and checkpoints counted in optimizer steps.

#include <cstdint>
#include <map>
#include <string>

#include "accum/run_config.h"

namespace accum {

class RunContext;

struct TrainingArguments {
    std::string output_dir;
    Strategy eval_strategy = Strategy::No;
    std::int64_t eval_steps = 0;
    std::int64_t per_device_train_batch_size = 8;
    std::int64_t gradient_accumulation_steps = 1;
    double learning_rate = 5e-5;
    std::int64_t num_train_epochs = 3;
    std::int64_t max_steps = -1;
    std::int64_t warmup_steps = 0;
    SchedulerKind lr_scheduler_type = SchedulerKind::Linear;
    double weight_decay = 0.0;
    double max_grad_norm = 1.0;
    std::int64_t logging_steps = 500;
    Strategy save_strategy = Strategy::Steps;
    std::int64_t save_steps = 500;
    std::int64_t save_total_limit = 0;
    std::uint64_t seed = 42;
    bool auto_find_batch_size = false;
    bool bf16 = false; // mixed precision: the forward under bf16 autocast
    bool fp16 = false; // fp16 autocast and a dynamic loss scaler (CUDA)

    static TrainingArguments from(const RunConfig& config);
};

// compute_metrics(eval_pred) -> {"accuracy": ..., "f1": ...}; the Trainer adds the eval_ prefix.
using Metrics = std::map<std::string, double>;

class Trainer {
public:
    // Trainer(model=model, args=args, train_dataset=..., eval_dataset=..., compute_metrics=...):
    // model, data and optimizer come from the run context built from the same config.
    Trainer(RunContext& ctx, TrainingArguments args);

    void train(const std::string& resume_from_checkpoint = "");
    Metrics evaluate();

private:
    void inner_training_loop();
    RunContext& ctx_;
    TrainingArguments args_;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
