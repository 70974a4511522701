#pragma once
// An estimate and a training run must not overlap in one process: both count
// memory on the process's counters, and the estimate draws from (and then puts
// back) the global random generator. A run marks itself with RunInProgress: it
// waits for an estimate that is under way (the estimate sees the run and stops at
// its next check), and an estimate that starts while a run trains refuses. On the
// run's own thread (the out-of-memory suggestion, after the run) estimates are
// allowed.
namespace accum::memory {

class RunInProgress {
public:
    RunInProgress();
    ~RunInProgress();
    RunInProgress(const RunInProgress&) = delete;
    RunInProgress& operator=(const RunInProgress&) = delete;
};

// Held by an estimate for its whole length.
class EstimateInProgress {
public:
    EstimateInProgress();
    ~EstimateInProgress();
    EstimateInProgress(const EstimateInProgress&) = delete;
    EstimateInProgress& operator=(const EstimateInProgress&) = delete;
    // A run on another thread has started (or is training): the estimate must stop.
    bool run_elsewhere() const;
};

} // namespace accum::memory
