// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The optimizer's and the scheduler's state as PyTorch's own state_dict()s,
// under the Trainer's file names (optimizer.pt, scheduler.pt): what
// Trainer.train(resume_from_checkpoint=...) loads, and what --resume restores
// the engine's optimizer from. The tensors are the optimizer's own, not copies:
// tensor_files.h streams them to the file.

#include <ATen/core/ivalue.h>

#include "accum/run_config.h"
#include "training/checkpoint.h"

namespace accum {

// optimizer.state_dict() of torch.optim.AdamW or SGD in torch 2.x: {"state":
// {index: {...}}, "param_groups": [{every option, "initial_lr" (the
// scheduler's), "params": [indices]}]}, parameters numbered group after group;
// in a Trainer run the Trainer's two groups (decay, no decay:
// Trainer.create_optimizer), which the engine folds into one without weight decay.
c10::IValue python_optimizer_state(const CheckpointParts& parts, const RunConfig& config);

// lr_scheduler.state_dict() of the LambdaLR Transformers' get_*_schedule_with_warmup makes.
c10::IValue python_scheduler_state(const CheckpointParts& parts, const RunConfig& config);

// The engine's optimizer state from `state` (what python_optimizer_state gives,
// read back from optimizer.pt). Throws std::runtime_error saying what does not
// fit: another optimizer's state, another number of parameters or groups, a
// state tensor whose shape is not its parameter's.
void restore_python_optimizer_state(const CheckpointParts& parts, const RunConfig& config, const c10::IValue& state);

} // namespace accum
