// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// accum-run's options as one table (engine/src/option_table.cpp): each row's
// name, aliases, help text, placeholder and completion, and what it is. The
// config keys' rows also hold how the key is read and written (the JSON form,
// set_option); accum-run's parser, --help, manual page and bash completion and
// the --config file's keys are all read from it. Torch-free and Qt-free.

#include <string>
#include <vector>

namespace accum {

struct OptionRow {
    enum class Role {
        ConfigKey, // a key of the JSON form (to_json_text) and of set_option
        Flag,      // a switch that sets another key (--no-shuffle: shuffle=false); in JSON, true applies it
        Runner,    // accum-run's own (--config, plan's --target-batch…): no config key, refused in JSON
    };
    enum class Complete { Nothing, File, Directory };

    std::string name;                 // --name
    Role role = Role::ConfigKey;
    std::vector<std::string> aliases; // other spellings the parser and JSON accept (--learning-rate)
    std::string metavar;              // the value's placeholder in --help; "" for a switch
    std::string help;
    std::vector<std::string> values;  // the words the completion offers (an enumerated option's values)
    Complete complete = Complete::Nothing;
    std::string file_extension;       // with Complete::File, only names ending .EXT (and directories)
    // A switch (no metavar) other than a runner's: the config key it sets, and to what.
    std::string sets_key;
    std::string sets_value;
    // False for where a run writes and how it shows (--output-dir, --quiet…), not
    // what it trains: --resume with only these, and no run record, is refused.
    bool shapes_training = true;

    bool takes_value() const { return !metavar.empty(); }
};

// Every row, in the order --help lists them.
const std::vector<OptionRow>& option_table();
// The row of a command-line name or alias (exact spelling); nullptr if none.
const OptionRow* find_option_row(const std::string& name);
// The row of a JSON key: as find_option_row, with '_' read as '-' (learning_rate).
const OptionRow* find_option_key(const std::string& key);

} // namespace accum
