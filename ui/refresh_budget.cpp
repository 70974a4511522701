#include "refresh_budget.h"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace studio {

int RefreshBudget::next_interval_ms(int current_ms, double measured_share) {
    current_ms = std::clamp(current_ms, kFastestMs, kSlowestMs);
    if (!(measured_share > 0.0) || !std::isfinite(measured_share)) return current_ms;
    const double wanted = current_ms * measured_share / kShare;
    const double limited = std::clamp(wanted, current_ms / 2.0, current_ms * 2.0);
    const int rounded = static_cast<int>(std::lround(limited / 10.0)) * 10;
    return std::clamp(rounded, kFastestMs, kSlowestMs);
}

double thread_cpu_seconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
#endif
    return -1.0;
}

} // namespace studio
