#pragma once
// One run at a time in a process. The CPU allocator's counters and budget, the
// memory fraction on CUDA and the thread settings are the process's, so two
// runs side by side would count each other's memory and fight over the cores.
// A run claims the process's run slot for its whole length (Session::run); a
// second one, from any thread, is refused (RunSlot::claim answers null with
// what holds it), whatever the caller's own habits are.
//
// An estimate and a run must not overlap either: both count memory on the
// process's counters, and the estimate draws from (and then puts back) the
// global random generator. A run that claims the slot waits for an estimate
// under way (the estimate sees the run and stops at its next check), and an
// estimate that starts while a run trains refuses.

#include <memory>
#include <string>

namespace accum::memory {

class RunSlot {
public:
    // Claims the slot for `what` (said to whoever is refused, e.g. "a training
    // run"). Null when it is taken: `holder` (if given) then says what holds it.
    static std::unique_ptr<RunSlot> claim(const std::string& what, std::string* holder = nullptr);
    ~RunSlot();
    RunSlot(const RunSlot&) = delete;
    RunSlot& operator=(const RunSlot&) = delete;

private:
    RunSlot() = default;
};

// Held by an estimate for its whole length.
class EstimateInProgress {
public:
    EstimateInProgress();
    ~EstimateInProgress();
    EstimateInProgress(const EstimateInProgress&) = delete;
    EstimateInProgress& operator=(const EstimateInProgress&) = delete;
    // A run holds the slot (it has started, or is training): the estimate must stop.
    bool run_elsewhere() const;
};

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
