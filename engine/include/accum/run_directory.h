#pragma once
// Run directories, as accum-run and the studio write them: accum_config.json
// (the run's record), metrics.jsonl, summary.json, config.json (a Hugging Face
// model's, at the end) and checkpoint-{step}/ (complete once model.safetensors,
// a LoRA run's adapter_model.safetensors or an earlier engine's model.pt,
// optimizer.pt, rng_state.pt and
// trainer_state.json are in). Found, checked and created here without LibTorch.

#include <cstdint>
#include <string>
#include <vector>

#include "accum/run_config.h"

namespace accum {

// The run's record: every option it ran with (to_json_text), which
// accum-run --config reproduces. A run directory's config.json is the model's,
// as in the Trainer's output_dir (the two once shared that name, and the model's
// was written over the record at the end of a run).
inline constexpr char kRunRecordFile[] = "accum_config.json";
// Where older runs kept their record: their config.json, unless it is a model's.
inline constexpr char kOlderRunRecordFile[] = "config.json";

// Whether `text` is a model's config (a JSON object naming "model_type" or
// "architectures", as save_pretrained writes it) and not a run's record.
bool is_model_config(const std::string& text);
// The run's record in `dir`: its accum_config.json, else an older run's
// config.json unless that is a model's config (a damaged one counts as the
// record: its reader names what is wrong); "" when `dir` holds neither.
std::string run_record_file(const std::string& dir);
// The record of the run --resume `requested` continues: the one in
// `requested` (a run directory), else the one in its parent (`requested` a
// checkpoint-N of it); "" when there is none.
std::string run_record_for_resume(const std::string& requested);

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

// Whether `dir` holds (part of) a run: its accum_config.json, config.json,
// metrics.jsonl, summary.json or a checkpoint.
bool holds_run(const std::string& dir);

// Why the run's --output-dir may not be written, or "" when it may: a directory
// that already holds a run is kept unless the run resumes there or
// --overwrite-output-dir is given. The text names the directory and the ways out.
std::string output_dir_problem(const RunConfig& config);

// For --overwrite-output-dir: removes the previous run's accum_config.json,
// config.json, metrics.jsonl, summary.json and checkpoints from `dir` (nothing else). False,
// with `error` set, when something could not be removed.
bool clear_run(const std::string& dir, std::string& error);

// Creates a new directory for one run under `parent` (made if missing), named
// after the local time (20261201-101530), with -2, -3, … appended when that name
// is taken; creating it is the claim, so two runs started in the same second get
// two directories. Returns its path, or "" with `error` set.
std::string create_run_directory(const std::string& parent, std::string& error);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
