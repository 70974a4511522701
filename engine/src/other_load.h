#pragma once
// The load of the machine's other programs: every CPU's busy time from
// /proc/stat less this process's own CPU time, per second of wall time, in
// cores. The adapting thread count (training/thread_tuner.h) and the planner's
// timing rounds (planning/memory_planner.cpp) read it.

namespace accum {

class OtherLoadMeter {
public:
    OtherLoadMeter();
    // Cores the other programs used since the previous reading (or the meter's
    // making); NaN when the figures are not available (no /proc/stat), and NaN
    // without reading when the previous reading is less than `at_least_s` old
    // (a caller on every training step: what a reading costs is in
    // bench/BUSY_MACHINE.md). Over a short interval the figure is coarse (the
    // kernel counts in ticks), even below 0; the sum over readings is right.
    double take(double at_least_s = 0.0);

private:
    bool read(double& machine_busy_s, double& self_s, double& wall_s) const;
    bool ok_ = false;
    double busy_ = 0.0, self_ = 0.0, wall_ = 0.0;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
