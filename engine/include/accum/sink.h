#pragma once
// Where a run's records go. The engine calls these on its own thread; an
// implementation that hands them to another thread must copy them.

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
    virtual void on_summary(const SummaryRecord&) {}
};

} // namespace accum
