// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A configuration file's text: accum-run's options as JSON, or what Transformers'
// TrainingArguments(...).to_json_string() writes (docs/accum-run.md lists how each
// of its fields maps to an option, and which are refused or ignored). Torch-free.

#include <string>
#include <vector>

#include "accum/run_config.h"

namespace accum {

// from_json_text, and the names of the TrainingArguments fields that were set
// but do not change training (the hub, reporting, workers, …): ignored, for a
// note. from_json_text reads a file through this too.
RunConfig read_config_text(const std::string& text, const RunConfig& base, std::vector<ConfigProblem>& problems,
                           std::vector<std::string>& ignored);

// What a configuration's text holds when its reader is told rather than left to
// recognise it (a lesson states it): accum-run's options only, where a field of
// TrainingArguments that is no option is refused by name rather than turning the
// whole text into TrainingArguments with its defaults; or TrainingArguments,
// read whole (missing fields take Transformers' defaults) even when every key is
// also an option's spelling (learning_rate, gradient_accumulation_steps).
enum class ConfigTextForm { Recognised, Options, TrainingArguments };
RunConfig read_config_text(const std::string& text, const RunConfig& base, ConfigTextForm form,
                           std::vector<ConfigProblem>& problems, std::vector<std::string>& ignored);

// One line naming the ignored fields ("" when there are none).
std::string ignored_fields_note(const std::vector<std::string>& ignored);

} // namespace accum
