#pragma once
// Checkpoints: output_dir/checkpoint-{global_step}/ with model.pt, optimizer.pt,
// rng_state.pt and trainer_state.json (progress, scheduler, log history).
// Written into a temporary directory, synced, then renamed, so a half-written
// checkpoint is never the latest.

#include <string>

namespace accum {

class RunContext;

// Writes output_dir/checkpoint-{global_step}/ (the run log's state goes into
// trainer_state.json) and keeps at most `save_total_limit` checkpoints (0 = all),
// deleting the oldest: the one just written is the newest and stays.
std::string save_checkpoint(RunContext& ctx, const std::string& output_dir, int save_total_limit);

// Restores model, optimizer, scheduler, RNG, progress and the run log's state
// from the newest complete checkpoint in `checkpoint_dir` (accum/run_directory.h).
// Throws DataError when there is none or it is unreadable, ConfigError when it
// was written by an incompatible run.
void load_checkpoint(RunContext& ctx, const std::string& checkpoint_dir);

} // namespace accum
