#include "other_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

namespace accum {

namespace {
double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

OtherLoadMeter::OtherLoadMeter() { ok_ = read(busy_, self_, wall_); }

bool OtherLoadMeter::read(double& machine_busy_s, double& self_s, double& wall_s) const {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    // user nice system idle iowait irq softirq steal (guest time is inside user)
    double v[8] = {};
    if (!(stat >> cpu) || cpu != "cpu") return false;
    for (double& x : v)
        if (!(stat >> x)) return false;
    const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    if (tick <= 0) return false;
    machine_busy_s = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / tick;
    rusage self{};
    if (getrusage(RUSAGE_SELF, &self) != 0) return false;
    self_s = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
             static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) * 1e-6;
    wall_s = seconds_now();
    return true;
}

double OtherLoadMeter::take(double at_least_s) {
    double busy = 0, self = 0, wall = 0;
    if (!ok_ || seconds_now() - wall_ < at_least_s || !read(busy, self, wall)) return std::nan("");
    const double other = wall > wall_ ? ((busy - busy_) - (self - self_)) / (wall - wall_) : std::nan("");
    busy_ = busy;
    self_ = self;
    wall_ = wall;
    return other;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
