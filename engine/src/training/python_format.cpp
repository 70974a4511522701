#include "training/python_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace accum {

std::string python_float(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    // The shortest round-trip digits, from the scientific form "d.ddde±x".
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
    const auto e = sci.find('e');
    std::string_view mantissa = sci.substr(0, e);
    const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
    std::string out;
    if (!mantissa.empty() && mantissa.front() == '-') {
        out = "-";
        mantissa.remove_prefix(1);
    }
    std::string digits;
    for (const char c : mantissa)
        if (c != '.') digits += c;
    // Python's repr: scientific when the exponent is below -4 or at least 16.
    if (exponent < -4 || exponent >= 16) {
        out += digits.front();
        if (digits.size() > 1) {
            out += '.';
            out.append(digits, 1);
        }
        const auto magnitude = std::to_string(std::abs(exponent)); // at least two digits, as Python's "e-05"
        out += exponent < 0 ? "e-" : "e+";
        if (magnitude.size() < 2) out += '0';
        return out + magnitude;
    }
    if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    const auto whole = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0') + ".0";
    return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

double python_round(double value, int digits) {
    if (!std::isfinite(value)) return value;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, value);
    return std::strtod(buf, nullptr);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
