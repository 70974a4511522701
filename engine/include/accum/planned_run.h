#pragma once
// A training run with the planning layer's help, as accum-run and the studio
// start one: Session::run, and around it what plans with measurements —
//  - out of memory: the summary suggests a smaller micro-batch with more
//    accumulation steps for the same effective batch; under a configured budget
//    the suggestion is measured (plan_memory: a probe of each lever and a short
//    run of each pick, seconds; the sink's on_log says so, a stop cuts it short),
//    because a guess can run out of memory again; otherwise it is half the
//    micro-batch;
//  - --auto-find-batch-size: like Transformers, through Accelerate's
//    find_executable_batch_size (retry with int(batch × 0.9) on out of memory);
//    unlike it, K is raised so the effective batch stays (at least) the same.
// The planning layer sits above the session: the session never plans, so a
// probe run cannot plan again.

#include <stop_token>

#include "accum/records.h"
#include "accum/run_config.h"
#include "accum/session.h"
#include "accum/sink.h"

namespace accum {

// Blocks until the run (and its advice, or its retries) ends; the summary is
// returned and sent to the sink once, last. Never throws for a run's failures.
SummaryRecord run_planned(Session& session, const RunConfig& config, Sink& sink, std::stop_token stop = {});

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
