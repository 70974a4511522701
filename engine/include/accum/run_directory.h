#pragma once
// Run directories, as accum-run and the studio write them: config.json,
// metrics.jsonl, summary.json and checkpoint-{step}/ (complete once model.safetensors
// or an earlier engine's model.pt, optimizer.pt, rng_state.pt and trainer_state.json
// are in). Found, checked and created here without LibTorch.

#include <cstdint>
#include <string>
#include <vector>

#include "accum/run_config.h"

namespace accum {

// The checkpoint-N directories in `dir`, complete or not, oldest (lowest N) first.
std::vector<std::string> checkpoints_in(const std::string& dir);
// The newest complete checkpoint-N in `dir`, or `dir` itself if it is one; "" if none.
std::string latest_checkpoint(const std::string& dir);
// The checkpoint --resume `requested` means: `requested` itself when it is one
// (named checkpoint-N, or holding trainer_state.json), else the newest
// checkpoint-N in it, complete or not (a damaged one is refused, not skipped);
// "" when there is none.
std::string checkpoint_to_resume(const std::string& requested);
// The global_step recorded in a checkpoint directory; -1 if unreadable.
std::int64_t checkpoint_global_step(const std::string& checkpoint_dir);

// Whether `dir` holds (part of) a run: its config.json, metrics.jsonl,
// summary.json or a checkpoint.
bool holds_run(const std::string& dir);

// Why the run's --output-dir may not be written, or "" when it may: a directory
// that already holds a run is kept unless the run resumes there or
// --overwrite-output-dir is given. The text names the directory and the ways out.
std::string output_dir_problem(const RunConfig& config);

// For --overwrite-output-dir: removes the previous run's config.json,
// metrics.jsonl, summary.json and checkpoints from `dir` (nothing else). False,
// with `error` set, when something could not be removed.
bool clear_run(const std::string& dir, std::string& error);

// Creates a new directory for one run under `parent` (made if missing), named
// after the local time (20261201-101530), with -2, -3, … appended when that name
// is taken; creating it is the claim, so two runs started in the same second get
// two directories. Returns its path, or "" with `error` set.
std::string create_run_directory(const std::string& parent, std::string& error);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
