// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// This test executable started again as a launcher's ranks, in its worker mode
// (`EXE --worker SCENARIO …`): test_distributed and test_distributed_launch each
// have one.

#include <chrono>
#include <filesystem>
#include <string>

#include <QStringList>

#include "distributed/launcher.h"

inline std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

inline accum::dist::LaunchOptions worker_launch(int nproc, const QStringList& args) {
    accum::dist::LaunchOptions o;
    o.executable = self_exe();
    o.arguments = {"--worker"};
    for (const auto& a : args) o.arguments.push_back(a.toStdString());
    o.plan.nproc_per_node = nproc;
    o.stop_grace = std::chrono::seconds(5);
    return o;
}
