#pragma once
// accum-run as a function: the tests call it in-process, main() calls it once.

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

namespace accum::cli {

// Runs the command line; returns the exit code. `interrupt` (may be null) is
// polled: when it becomes true the run stops cleanly (summary written, exit 130).
// `program` is accum-run's own path: --nproc-per-node N starts N copies of it
// (the ranks, RANK … in their environment) and waits for them. A process with
// RANK and WORLD_SIZE in its environment trains as that rank: rank 0 writes the
// run's files and prints its log, the others print only their errors, "[rank i]".
// `out_is_terminal`: `out` is a terminal, so a run of one process shows a
// progress bar there (not with --quiet or --disable-tqdm).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const std::atomic<bool>* interrupt = nullptr, const std::string& program = {}, bool out_is_terminal = false);

} // namespace accum::cli
// SPDX-License-Identifier: GPL-3.0-or-later
