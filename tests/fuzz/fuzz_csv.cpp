// libFuzzer target: the CSV parser must accept or reject with a DataError, never crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "accum/errors.h"
#include "data/csv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto t = accum::parse_csv(text, "label", "fuzz.csv");
        if (t.features.size() != static_cast<std::size_t>(t.rows) * t.feature_names.size()) __builtin_trap();
        if (t.labels.size() != static_cast<std::size_t>(t.rows)) __builtin_trap();
        for (float f : t.features)
            if (!std::isfinite(f)) __builtin_trap();
        for (auto l : t.labels)
            if (l < 0 || l >= static_cast<std::int64_t>(t.class_names.size())) __builtin_trap();
    } catch (const accum::DataError&) {
    }
    return 0;
}
// SPDX-License-Identifier: GPL-3.0-or-later
