// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How each config key of the option table (option_table.cpp) is read and
// written: one getter and one setter per key, so a key can never be written but
// not read. run_config.cpp turns them into the JSON form and set_option.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accum/run_config.h"

namespace accum {

struct Field {
    enum class Kind { Text, Boolean, Integer, Real }; // what command-line text becomes
    std::string key;
    Kind kind;
    std::function<nlohmann::json(const RunConfig&)> get;
    std::function<bool(RunConfig&, const nlohmann::json&, std::string&)> set;
    bool choice = false; // an enumerated option: its error names the value already
};

// The config keys' fields, in the table's order.
const std::vector<Field>& config_fields();
// The field of a JSON key or command-line name (aliases, '_' for '-'); nullptr if none.
const Field* find_field(const std::string& key);

} // namespace accum
