#pragma once
// Environment switches for side-by-side measurements (bench/): NAME=0 turns off
// a feature that is on by default. Read once per process by each caller.

#include <cstdlib>
#include <string_view>

namespace accum {

inline bool switched_off(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::string_view(value) == "0";
}

} // namespace accum
