#pragma once
// Numbers as Python prints them, for log lines that read like their Python
// originals: repr(float) (the shortest text that reads back as the same double:
// 0.05, 2.3026, 1e-05, 100.0) and round(x, n).

#include <string>

namespace accum {

std::string python_float(double value);
// Python's round(value, digits): the exact binary value rounded to `digits`
// decimals, halves to even (as C's printf rounds it).
double python_round(double value, int digits);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
