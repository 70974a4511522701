#pragma once
// accum-run's command line: options → RunConfig, with every problem named.

#include <string>
#include <vector>

#include "accum/run_config.h"
#include "runner/cli_docs.h"

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
    // plan: a measured gradient noise scale (--noise-scale N, or --noise-scale-from a run's directory)
    double noise_scale = 0;
    // estimate
    bool json = false;
};

ParsedArguments parse_arguments(const std::vector<std::string>& args);
std::string usage();
// The command line as data: the option table --help prints, for the manual page
// and the bash completion (cli_docs.h; accum-run-docs writes them at build time).
ProgramDoc program_doc();

} // namespace accum::cli
// SPDX-License-Identifier: GPL-3.0-or-later
