#pragma once
// Checkpoints: output_dir/checkpoint-{global_step}/ with the Trainer's files
//   model.safetensors     the weights, once: under their Hugging Face names for a
//                         module with the metadata (hf_export.h, with config.json
//                         and the tokenizer's files beside it), else under the
//                         engine's parameter names; a LoRA run (peft_export.h)
//                         writes adapter_model.safetensors and adapter_config.json
//                         instead, as the Trainer's checkpoint of a PEFT model, and
//                         --resume takes the frozen base from the run's --model
//   optimizer.pt, scheduler.pt   the optimizer's and scheduler's state_dict() as
//                         PyTorch's own (python_state.h): --resume and
//                         Trainer.train(resume_from_checkpoint=) read them
//   trainer_state.json    Transformers' TrainerState
//   rng_state.pt          the CPU generator; a data-parallel run adds
//                         rng_state_{rank}.pt for ranks 1 … N−1 (rng_state.pt is
//                         rank 0's), as Transformers keeps one RNG state per process
//   accum_state.json      the engine's progress, scheduler, scaler and log state.
// The TorchScript module is kept once per run, in the output directory
// (model.torchscript.pt), not in every checkpoint.
// A checkpoint of an earlier engine resumes too: model.pt and accum_optimizer.pt
// (LibTorch's archives), and before those existed, optimizer.pt the LibTorch
// archive and the engine's keys in trainer_state.json.
// The tensors are streamed from their own memory to the files (tensor_files.h
// states the bound), into a temporary directory with checked system calls
// (checked_file.h), synced, then renamed, so a half-written checkpoint is never
// the latest; a write that fails (disk full, I/O error, read-only or vanished
// directory) throws WriteError, the temporary directory removed and the earlier
// checkpoints as they were.

#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "accum/run_config.h"
#include "models/model.h"
#include "training/hf_export.h"
#include "training/lr_scheduler.h"
#include "training/optimizer.h"
#include "training/run_log.h"

namespace accum {

// In the output directory at the end of a run of a model loaded from a
// TorchScript file (--model FILE.pt): the trained module, as torch.jit.save writes it.
inline constexpr const char* kTrainedModuleFile = "model.torchscript.pt";
// An earlier engine's checkpoint files, which --resume still reads.
inline constexpr const char* kLegacyModelFile = "model.pt";
inline constexpr const char* kEngineOptimizerFile = "accum_optimizer.pt";
inline constexpr const char* kEngineStateFile = "accum_state.json";

// What model.safetensors holds and the files beside it (hf_export.h's
// model_files of the --model file's metadata). Throws ConfigError for metadata
// that is not the convention's.
ModelFiles run_model_files(Model& model, const RunConfig& config);

// What a checkpoint holds of the run, borrowed for saving or restoring it.
struct CheckpointParts {
    Model& model;
    Optimizer& optimizer;
    LrScheduler& lr_scheduler;
    LossScaler& scaler;
    RunLog& log; // its state() goes into trainer_state.json
    torch::Device device;
};

// Where the run stands, as trainer_state.json records it beside the parts.
struct CheckpointFacts {
    const RunConfig& config;
    Progress progress;
    double elapsed_s = 0;       // training time so far, earlier sessions included
    double epoch = 0;           // fractional epoch at the step
    std::int64_t total_updates = 0;
    std::int64_t num_epochs = 0;
    int world_size = 1;
};

struct CheckpointSaved {
    std::string directory;          // output_dir/checkpoint-{global_step}
    std::vector<std::string> notes; // an old checkpoint --save-total-limit could not delete
};

// Writes output_dir/checkpoint-{global_step}/ (the run log's state goes into
// trainer_state.json) and keeps at most `save_total_limit` checkpoints (0 = all),
// deleting the oldest: the one just written is the newest and stays.
// `rng_states`: the CPU generator's state of every rank, by rank
// (one in a run of one process). Throws WriteError.
CheckpointSaved save_checkpoint(const CheckpointParts& parts, const CheckpointFacts& facts,
                                const std::string& output_dir, int save_total_limit,
                                const std::vector<torch::Tensor>& rng_states);

// Restores model, optimizer, scheduler, RNG and the run log's state from the
// newest complete checkpoint in `checkpoint_dir` (accum/run_directory.h), and
// returns the progress it recorded, at the start of the next epoch when it was
// saved at an epoch's end (`micro_batches_per_epoch`).
// Throws DataError when there is none or it is unreadable, ConfigError when it
// was written by an incompatible run (another micro-batch, K or number of
// processes). Each rank restores its own RNG state.
Progress load_checkpoint(const CheckpointParts& parts, const RunConfig& config, int rank, int world_size,
                         std::int64_t micro_batches_per_epoch, const std::string& checkpoint_dir);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
