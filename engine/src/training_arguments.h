// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Transformers' TrainingArguments (what TrainingArguments(...).to_json_string()
// writes) as a run's configuration: each field the engine implements sets its
// option; a field it does not implement is refused at any value but
// Transformers' default; fields that do not change training are ignored and
// named. Used by read_config_text (run_config.cpp), so --config and the
// studio's "open configuration" read such a file alike.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accum/run_config.h"

namespace accum::training_arguments {

// Whether a JSON object is TrainingArguments rather than accum-run's options: it
// has a field of TrainingArguments that is no option's name (per_device_train_batch_size,
// num_train_epochs, lr_scheduler_type, optim, …). `is_option` says whether a key is
// an option of the table (with '_' spellings).
template <typename IsOption>
bool recognise(const nlohmann::json& object, IsOption is_option);
bool is_field(const std::string& key);

// Applies the fields of `object` to `config` (missing fields take Transformers'
// defaults, as TrainingArguments(**object) would). Problems name the field and
// its value; `ignored` gets the fields that do not change training and are set
// to something other than their default. Returns the keys that are no field of
// TrainingArguments, for the caller to read as options.
nlohmann::json apply(const nlohmann::json& object, RunConfig& config, std::vector<ConfigProblem>& problems,
                     std::vector<std::string>& ignored);

template <typename IsOption>
bool recognise(const nlohmann::json& object, IsOption is_option) {
    for (const auto& [key, value] : object.items())
        if (is_field(key) && !is_option(key)) return true;
    return false;
}

} // namespace accum::training_arguments
