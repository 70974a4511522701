#pragma once
// Checkpoints: output_dir/checkpoint-{global_step}/ with model.pt, optimizer.pt,
// rng_state.pt and trainer_state.json (progress, scheduler, log history).
// Written into a temporary directory, synced, then renamed, so a half-written
// checkpoint is never the latest.

#include <cstdint>
#include <string>
#include <vector>

namespace accum {

class RunContext;

std::string save_checkpoint(RunContext& ctx, const std::string& output_dir, const std::vector<std::string>& log_history,
                            double best_metric, int save_total_limit);

// Restores model, optimizer, scheduler, RNG and progress. Throws DataError
// when the directory is not a complete checkpoint of a compatible run.
void load_checkpoint(RunContext& ctx, const std::string& checkpoint_dir, std::vector<std::string>* log_history);

// The newest complete checkpoint-N in `dir`, or `dir` itself if it is one; "" if none.
std::string latest_checkpoint(const std::string& dir);
// The global_step recorded in a checkpoint directory; -1 if unreadable.
std::int64_t checkpoint_global_step(const std::string& checkpoint_dir);

} // namespace accum
