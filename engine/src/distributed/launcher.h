// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Starts this machine's workers and watches them, as torchrun does
// (docs/ARCHITECTURE.md §4.5). A signal sent to the launcher is passed on once;
// a second one kills the workers. They run in a process group of their own (a
// terminal's Ctrl-C reaches them only through the launcher) and are killed by
// the kernel if the launcher dies. launch_workers returns only when every
// worker it started has been reaped. Torch-free; POSIX (Linux).

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "distributed/world.h"

namespace accum::dist {

struct LaunchOptions {
    std::string executable;             // path of the program every worker runs
    std::vector<std::string> arguments; // its arguments (argv[1] …)
    LaunchPlan plan;
    // Extra variables for every worker (after the rank variables, which they may not override).
    std::vector<std::pair<std::string, std::string>> environment;
    std::chrono::milliseconds stop_grace{std::chrono::seconds(30)}; // stopped workers' time before SIGKILL
    // The first local rank to start; the plan's later ones follow. A program that
    // trains as rank 0 itself (the studio) starts 1 … N−1.
    int first_local_rank = 0;
    // Catch SIGINT and SIGTERM while the workers run and pass them on (accum-run).
    // Off for a program with handlers of its own (the studio).
    bool forward_signals = true;
    // Polled every 20 ms: once true, the workers still running are stopped
    // (SIGTERM, then SIGKILL after stop_grace) and are not counted as failed.
    std::function<bool()> stop;
};

struct WorkerStatus {
    int rank = -1;       // global rank
    int local_rank = -1;
    int pid = -1;        // -1: it could not be started
    int exit_code = -1;  // when it exited
    int signal = 0;      // when a signal ended it
    bool stopped_by_launcher = false; // the launcher sent it SIGTERM/SIGKILL
    std::string start_error;          // why it could not be started (exec's errno text)
    std::string host;                 // a launch on several machines: this machine's address toward the master

    bool succeeded() const { return pid > 0 && signal == 0 && exit_code == 0; }
};

struct LaunchResult {
    // 0 when every worker succeeded. Otherwise the failed rank's exit code, or 6
    // (a distributed failure) when a signal ended it, or 127 when it could not be
    // started; 128 + the signal when the launcher was interrupted (130 for SIGINT).
    int exit_code = 0;
    int failed_rank = -1;     // the rank whose failure ended the run; -1 if none
    int interrupt_signal = 0; // SIGINT / SIGTERM the launcher received and passed on
    std::vector<WorkerStatus> workers; // by local rank
    std::string message;      // what happened, for the log ("" on success)
};

// Throws ConfigError for an invalid plan or an empty executable, and when
// another launch_workers is running in this process. Everything else (a worker
// that cannot be started, fails, or is interrupted) is in the result.
LaunchResult launch_workers(const LaunchOptions& options);

} // namespace accum::dist
