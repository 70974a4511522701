// What one reading of the other programs' load costs (other_load.h: /proc/stat
// and getrusage), against a step of the MLP at 64 × 4. The run reads it at most
// every 20 ms for that reason (bench/BUSY_MACHINE.md, "Reading the load").
//   load_read_cost [readings]   (20000 by default)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "other_load.h"

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 20000;
    if (n <= 0) {
        std::fprintf(stderr, "load_read_cost: readings: '%s' is not a positive number\n", argv[1]);
        return 2;
    }
    accum::OtherLoadMeter meter;
    double sum = 0.0;
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) sum += meter.take();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (std::isnan(sum)) {
        std::fprintf(stderr, "load_read_cost: the meter reads nothing here (no /proc/stat)\n");
        return 1;
    }
    std::printf("%ld readings, %.1f µs each\n", n, us / static_cast<double>(n));
    return 0;
}
// SPDX-License-Identifier: GPL-3.0-or-later
