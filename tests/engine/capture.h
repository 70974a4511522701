#pragma once
// A sink that keeps every record a run sends, and a run into it: what the
// engine tests read back.

#include <string>
#include <vector>

#include "accum/records.h"
#include "accum/session.h"
#include "accum/sink.h"

namespace accum::testing {

struct Capture : Sink {
    std::vector<MicroStepRecord> micro;
    std::vector<StepRecord> steps;
    std::vector<EvalRecord> evals;
    std::vector<MemoryRecord> memory;
    std::vector<std::string> logs;
    SummaryRecord summary;
    void on_micro_step(const MicroStepRecord& r) override { micro.push_back(r); }
    void on_step(const StepRecord& r) override { steps.push_back(r); }
    void on_eval(const EvalRecord& r) override { evals.push_back(r); }
    void on_memory(const MemoryRecord& r) override { memory.push_back(r); }
    void on_log(const std::string& l) override { logs.push_back(l); }
    void on_summary(const SummaryRecord& s) override { summary = s; }
};

inline Capture run(const RunConfig& config) {
    Capture c;
    Session session;
    session.run(config, c);
    return c;
}

} // namespace accum::testing
