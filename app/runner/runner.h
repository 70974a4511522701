#pragma once
// accum-run as a function: the tests call it in-process, main() calls it once.

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

namespace accum::cli {

// Runs the command line; returns the exit code. `interrupt` (may be null) is
// polled: when it becomes true the run stops cleanly (summary written, exit 130).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const std::atomic<bool>* interrupt = nullptr);

} // namespace accum::cli
