#pragma once
// accum-run's command line: options → RunConfig, with every problem named.

#include <string>
#include <vector>

#include "accum/run_config.h"

namespace accum::cli {

struct ParsedArguments {
    std::string command = "train";    // train | plan | estimate | help | version | devices
    RunConfig config;
    std::vector<ConfigProblem> problems;
    // Said on stderr before anything runs, not problems: a --config file that
    // records benchmark switches its run was made with (RunWriter, "bench-switches").
    std::vector<std::string> notes;
    std::string config_file;
    // plan
    std::int64_t target_batch = 0;
    // estimate
    bool json = false;
};

ParsedArguments parse_arguments(const std::vector<std::string>& args);
std::string usage();

} // namespace accum::cli
// SPDX-License-Identifier: GPL-3.0-or-later
