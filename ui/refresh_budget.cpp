#include "refresh_budget.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace studio {

int RefreshBudget::next_interval_ms(int current_ms, double measured_share) {
    current_ms = std::clamp(current_ms, kFastestMs, kSlowestMs);
    if (!(measured_share > 0.0) || !std::isfinite(measured_share)) return current_ms;
    const double wanted = current_ms * measured_share / kShare;
    const double limited = std::max(wanted, current_ms / 2.0);
    const int rounded = static_cast<int>(std::lround(limited / 10.0)) * 10;
    return std::clamp(rounded, kFastestMs, kSlowestMs);
}

void RefreshBudget::start() {
    wall_start_ = std::chrono::steady_clock::now();
    cpu_start_s_ = thread_cpu_seconds();
}

int RefreshBudget::interval_after_redraw(int current_ms) {
    if (cpu_start_s_ < 0.0) return current_ms;
    const auto now = std::chrono::steady_clock::now();
    const double wall_s = std::chrono::duration<double>(now - wall_start_).count();
    if (wall_s < kMeasureS) return current_ms;
    const double cpu_s = thread_cpu_seconds();
    const int next = next_interval_ms(current_ms, (cpu_s - cpu_start_s_) / wall_s);
    wall_start_ = now;
    cpu_start_s_ = cpu_s;
    return next;
}

double thread_cpu_seconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
#endif
    return -1.0;
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
