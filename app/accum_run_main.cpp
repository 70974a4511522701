// accum-run: the headless runner. All logic lives in runner/ (tested in-process).
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "runner/runner.h"

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) { g_interrupted.store(true); }
} // namespace

int main(int argc, char** argv) {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::vector<std::string> args(argv + 1, argv + argc);
    // This program's own file: --nproc-per-node starts copies of it.
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return accum::cli::run(args, std::cout, std::cerr, &g_interrupted, ec ? std::string(argv[0]) : self.string(),
                           isatty(STDOUT_FILENO) != 0);
}
// SPDX-License-Identifier: GPL-3.0-or-later
