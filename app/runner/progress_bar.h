// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// accum-run's progress bar on a terminal, as tqdm draws the Trainer's: one line
// redrawn in place (\r, then clear to the end of the line) with the step of the
// total, the epoch, the window's loss, samples/s, and the time spent and left
// ([mm:ss<mm:ss]). Any other line is printed above it: the bar is cleared, the
// line printed, the bar drawn again. Torch-free.

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>

#include "accum/records.h"

namespace accum::cli {

// "05:07", or "1:02:03" from an hour on (tqdm's format_interval).
std::string format_interval(double seconds);

// The bar's text for a step of `total` (0 when the total is not known), at most
// `width` characters. The rate and the time left come from the record's own
// clock (elapsed_s: the run's training time, earlier sessions of a resumed run
// included, as samples_seen and step count them). Exposed for the tests.
std::string progress_line(const StepRecord& step, std::int64_t total, int width);

class ProgressBar {
public:
    // total: the run's optimizer steps (0 when not known: then no time left).
    ProgressBar(std::ostream& out, std::int64_t total);
    // After each optimizer step: redraws the bar (at most ten times a second,
    // and always at the first and the last step).
    void on_step(const StepRecord& step);
    // A line of the log: above the bar.
    void print_line(const std::string& line);
    // The run is over: the bar's last state stays as a line of its own.
    void finish();

private:
    void draw_locked();
    void clear_locked();
    std::ostream& out_;
    std::int64_t total_;
    std::mutex mutex_;
    bool have_step_ = false;
    bool drawn_ = false;
    bool finished_ = false;
    StepRecord last_{};
    std::chrono::steady_clock::time_point last_draw_{};
};

// The width of the terminal on standard output (COLUMNS, else 80, when it does not say).
int terminal_width();

} // namespace accum::cli
