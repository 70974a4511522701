// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A run's processes from the session's side (docs/ARCHITECTURE.md §4.5). The
// training is the caller's callback; this layer knows nothing of it.

#include <chrono>
#include <functional>
#include <string>

#include "accum/data_parallel.h"
#include "accum/errors.h"
#include "accum/records.h"
#include "accum/run_config.h"
#include "accum/sink.h"

namespace accum::dist {

// The run's stop requests, as the group's joins and collectives consult them.
struct StopQuery {
    std::function<bool()> requested;
    // How long ago the stop was requested (zero when it was not).
    std::function<std::chrono::steady_clock::duration()> requested_for;
};

// A failure of the process group as the summary says it: the error's text
// (which names this rank and, when known, the one at fault) and its facts.
EngineMessage distributed_message(const DistributedError& e);

// Trains one rank (`train(config, local_processes)` on this thread) in the
// process group, the thread's default for the run; the ranks meet once more at
// the end so that none leaves while another still needs it. A rank that cannot
// join, or fails on its own (a write, memory, data), tells the others, who stop
// within seconds naming it. `abandon` (may be empty): the others are gone;
// joining gives up.
using TrainRank = std::function<SummaryRecord(const RunConfig& config, int local_processes)>;
SummaryRecord run_rank(RunConfig config, const WorldInfo& world, Sink& sink, const StopQuery& stop,
                       const TrainRank& train, std::function<bool()> abandon = {});

// Rank 0 is run_rank on this thread; ranks 1 … N−1 are `program` (accum-run)
// with the configuration in a temporary file, launched and watched on a thread
// of their own. A worker that ends before the others have met stops rank 0 from
// waiting; when rank 0 is done, the workers get a few seconds to end by
// themselves, then SIGTERM, then SIGKILL: none outlives the run.
SummaryRecord host_ranks(const RunConfig& config, const std::string& program, Sink& sink, const StopQuery& stop,
                         const TrainRank& train);

} // namespace accum::dist
