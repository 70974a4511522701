// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>

#include <c10/util/Exception.h>

#include "accum/errors.h"

namespace accum {

std::string without_backtrace(const std::string& text) {
    // c10 appends "Exception raised from F at FILE:LINE (most recent call first):"
    // and then one "frame #N: …" line per frame; a message that quotes another
    // (a rank's failure, a wrapped reason) may carry such lines in its middle.
    std::string out;
    std::size_t start = 0;
    bool skipping = false;
    while (start <= text.size()) {
        const auto end = text.find('\n', start);
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        const auto first = line.find_first_not_of(' ');
        const std::string trimmed = first == std::string::npos ? std::string() : line.substr(first);
        if (trimmed.rfind("Exception raised from ", 0) == 0) skipping = true;
        else if (skipping && trimmed.rfind("frame #", 0) != 0) skipping = false;
        if (!skipping && trimmed.rfind("frame #", 0) != 0) out += (out.empty() ? "" : "\n") + line;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

std::string error_text(const std::exception& e) {
    if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return without_backtrace(c10->what_without_backtrace());
    return without_backtrace(e.what());
}

} // namespace accum
