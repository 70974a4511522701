// How often the window redraws during a run.
//
// On a machine whose cores are all training (the MLP's threads take both cores
// of a 2-core machine), every millisecond the window's thread spends drawing is
// taken from training, and more than that: the compute thread it displaces holds
// up its partner. So the window keeps its own thread under a small share of one
// core: twice a second it measures that share (thread CPU time over wall time)
// and sets the redraw interval, between 10 and 2 redraws a second. Over budget it
// slows down at once to the interval that fits; under budget it shortens the
// interval to no less than half per measurement, so it does not swing back and forth.
// Where drawing is cheap it stays at 10 a second. Why half a percent, measured:
// bench/STUDIO_MEASUREMENTS.md.
#pragma once

#include <chrono>

namespace studio {

class RefreshBudget {
public:
    static constexpr int kFastestMs = 100;
    static constexpr int kSlowestMs = 500;
    static constexpr double kShare = 0.005; // of one core
    static constexpr double kMeasureS = 0.5; // the share is measured over this much wall time

    // The next interval, given the current one and the window thread's measured
    // share of a core while using it: the interval that would spend exactly kShare,
    // but at most half as long as the current one.
    static int next_interval_ms(int current_ms, double measured_share);

    // Starts measuring, on the window's thread (at the start of a run).
    void start();
    // Called on the window's thread after each redraw: after each kMeasureS of
    // measuring, the interval to use from now on; otherwise current_ms.
    int interval_after_redraw(int current_ms);

private:
    std::chrono::steady_clock::time_point wall_start_{};
    double cpu_start_s_ = -1.0; // negative: not measuring
};

// CPU time of the calling thread in seconds, or a negative value where the
// system cannot tell (then the interval stays at kFastestMs).
double thread_cpu_seconds();

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
