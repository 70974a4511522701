// libFuzzer target: JSON configs (accum-run --config) and metrics lines must
// parse or give problems that name a key, never crash; validate() must not crash
// on whatever values a config carries.
#include <cstddef>
#include <cstdint>
#include <string>

#include "accum/metrics_io.h"
#include "accum/run_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<accum::ConfigProblem> problems;
    const auto config = accum::from_json_text(text, accum::RunConfig{}, problems);
    for (const auto& p : problems)
        if (p.option.empty() || p.message.empty()) __builtin_trap();
    (void)accum::validate(config);
    (void)accum::to_json_text(config);
    std::string error;
    (void)accum::parse_json_line(text, error);
    return 0;
}
// SPDX-License-Identifier: GPL-3.0-or-later
