// SPDX-License-Identifier: GPL-3.0-or-later
#include "runner/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>

namespace accum::cli {

namespace {

// Erase the line the cursor is on: back to its start, clear to its end (ANSI EL).
constexpr const char* kClearLine = "\r\033[K";

std::string fixed(double v, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
    return buffer;
}

} // namespace

std::string format_interval(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const auto s = static_cast<std::int64_t>(seconds);
    char buffer[64];
    if (s >= 3600)
        std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                      static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
    else
        std::snprintf(buffer, sizeof buffer, "%02lld:%02lld", static_cast<long long>(s / 60),
                      static_cast<long long>(s % 60));
    return buffer;
}

std::string progress_line(const StepRecord& r, std::int64_t total, int width) {
    const bool known = total > 0 && r.step <= total;
    const double rate = r.elapsed_s > 0 ? static_cast<double>(r.samples_seen) / r.elapsed_s : 0.0;
    const double per_step = r.step > 0 ? r.elapsed_s / static_cast<double>(r.step) : 0.0;
    std::string line = "step " + std::to_string(r.step) + (known ? "/" + std::to_string(total) : std::string());
    if (known) {
        // tqdm's bar: the share done, in ten-character cells.
        constexpr int kCells = 10;
        const double done = static_cast<double>(r.step) / static_cast<double>(total);
        const int full = static_cast<int>(done * kCells);
        line += " " + std::to_string(static_cast<int>(done * 100)) + "%|" + std::string(full, '#') +
                std::string(kCells - full, ' ') + "|";
    }
    // The times before the epoch and the loss: a narrow terminal cuts the end.
    line += " [" + format_interval(r.elapsed_s) + "<" +
            (known ? format_interval(per_step * static_cast<double>(total - r.step)) : std::string("?")) + ", " +
            fixed(rate, 1) + " samples/s] epoch " + fixed(r.epoch, 2) + " loss " + fixed(r.loss, 4);
    // One character short of the width: a line as wide as the terminal wraps on some.
    const auto room = static_cast<std::size_t>(std::max(width - 1, 20));
    if (line.size() > room) line.resize(room);
    return line;
}

int terminal_width() {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && std::atoi(columns) > 0)
        return std::atoi(columns);
    return 80;
}

ProgressBar::ProgressBar(std::ostream& out, std::int64_t total) : out_(out), total_(total) {}

void ProgressBar::on_step(const StepRecord& step) {
    const std::lock_guard lock(mutex_);
    if (finished_) return;
    last_ = step;
    const bool first = !have_step_;
    have_step_ = true;
    const auto now = std::chrono::steady_clock::now();
    // tqdm's mininterval: a redraw per step would cost more than a fast step.
    if (first || step.step == total_ || now - last_draw_ >= std::chrono::milliseconds(100)) {
        last_draw_ = now;
        draw_locked();
    }
}

void ProgressBar::print_line(const std::string& line) {
    const std::lock_guard lock(mutex_);
    clear_locked();
    out_ << line << "\n";
    if (have_step_ && !finished_) draw_locked();
    else out_.flush();
}

void ProgressBar::finish() {
    const std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    if (!have_step_) return;
    draw_locked(); // the last step's state, also when the redraw of it was skipped
    out_ << "\n" << std::flush;
    drawn_ = false;
}

void ProgressBar::draw_locked() {
    out_ << kClearLine << progress_line(last_, total_, terminal_width()) << std::flush;
    drawn_ = true;
}

void ProgressBar::clear_locked() {
    if (drawn_) out_ << kClearLine;
    drawn_ = false;
}

} // namespace accum::cli
