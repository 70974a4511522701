#pragma once
// The default thread count, adapted while a run runs. When another program takes
// a core, pools that spin and wait on every operator for a core they no longer
// have run several times slower than fewer threads would (bench/BUSY_MACHINE.md).
// The tuner sees each optimizer step's time and what the machine's other
// programs used meanwhile; when that load changes by half a core or more, or the
// steps slow down at the same load, it times a few steps at each candidate count
// and keeps the fastest (the current one unless another is clearly faster). A
// count already far behind is timed one step only: a trial costs little when
// the wrong count is several times slower.
// Pure arithmetic on the timings it is given (no clock, no torch): the run's
// context measures and applies (training/run_context.cpp), the test feeds it
// made-up timings (tests/engine/test_thread_tuner.cpp).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accum {

struct ThreadTunerOptions {
    double window_s = 0.3;        // a measurement: at least this long …
    int window_steps = 3;         // … and this many optimizer steps
    int settle_steps = 1;         // steps left out after a switch (the pools wake up)
    double load_change = 0.5;     // cores of other load, up or down, that start a trial
    double slowdown = 0.7;        // a window below this share of the settled rate starts one too
    double margin = 0.05;         // another count must be this much faster to be kept
    double cut_short = 0.5;       // a trial's count below this share of the best rate seen is timed one step
    double trial_gap_s = 2.0;     // at least this long between trials (seconds of steps timed)
};

// What the tuner decided after a trial, for the log and the summary.
struct ThreadDecision {
    int threads = 0;                   // the count kept
    int previous = 0;                  // the count before the trial
    double other_cores = -1.0;         // the other programs' load the trial saw; -1 unknown
    std::vector<std::pair<int, double>> rates; // each count tried and its samples/s
    std::string reason() const;        // one line: what was kept and why
};

class ThreadTuner {
public:
    // `candidates`: the counts it may choose, the first one the default it starts at.
    explicit ThreadTuner(std::vector<int> candidates, ThreadTunerOptions options = {});

    // The count to run the next step at.
    int threads() const { return current_; }

    // One optimizer step took `seconds` for `samples`, while the machine's other
    // programs used `other_cores` cores on average (NaN when unknown; one step's
    // figure may be off, even below 0, as long as a window's sum is right). A
    // trial's end returns its decision; a switch to try another count shows in
    // threads().
    std::optional<ThreadDecision> observe(double seconds, std::int64_t samples, double other_cores);

private:
    struct Window {
        double seconds = 0.0;
        double samples = 0.0;
        double load_seconds = 0.0; // other_cores × seconds, where known
        double known_seconds = 0.0;
        int steps = 0;
        void add(double s, std::int64_t n, double other);
        bool full(const ThreadTunerOptions& o) const { return steps >= o.window_steps && seconds >= o.window_s; }
        double rate() const { return seconds > 0 ? samples / seconds : 0.0; }
        double load() const { return known_seconds > 0 ? std::max(0.0, load_seconds / known_seconds) : -1.0; }
    };
    struct Trial {
        std::vector<int> order;                    // counts still to time
        std::vector<std::pair<int, double>> rates; // counts timed
        double best = 0.0;                         // the best rate so far, the trigger's included
        double load_seconds = 0.0;
        double known_seconds = 0.0;
        int previous = 0;
    };
    void start_trial(double reference_rate);
    void next_in_trial();
    ThreadDecision end_trial();

    std::vector<int> candidates_;
    ThreadTunerOptions options_;
    int current_ = 0;
    int settle_left_ = 0;
    Window window_;
    std::optional<Trial> trial_;
    bool settled_ = false;     // a rate and a load to compare with
    double settled_rate_ = 0.0;
    double settled_load_ = 0.0; // the load the count was chosen under (0 at the start: a quiet machine)
    double since_trial_s_ = 0.0;
    double gap_s_ = 0.0;        // the gap before the next trial
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
