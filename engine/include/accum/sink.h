#pragma once
// Where a run's records go. The engine calls these on its own thread; an
// implementation that hands them to another thread must copy them. A record
// that cannot be kept may end the run: on_micro_step, on_step, on_eval and
// on_memory may throw WriteError (accum/errors.h; RunWriter does when the disk
// refuses), and the run ends with exit code 7 and that message. on_summary
// must not throw: the run is over.

#include <string>

#include "accum/records.h"

namespace accum {

class Sink {
public:
    virtual ~Sink() = default;
    virtual void on_micro_step(const MicroStepRecord&) {}
    virtual void on_step(const StepRecord&) {}
    virtual void on_eval(const EvalRecord&) {}
    virtual void on_memory(const MemoryRecord&) {}
    // A human-readable line, as the style's Python original would print it.
    virtual void on_log(const std::string&) {}
    // The whole text behind an error's log line (LibTorch's what(), its C++
    // backtrace included): for the run's log file only, never shown to a
    // person (RunWriter keeps it in the run directory's log.txt).
    virtual void on_detail(const std::string&) {}
    virtual void on_summary(const SummaryRecord&) {}
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
