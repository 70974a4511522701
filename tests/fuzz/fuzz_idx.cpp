// libFuzzer target: the IDX parser must reject any bytes with a DataError, never crash.
#include <cstddef>
#include <cstdint>

#include "accum/errors.h"
#include "data/idx_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const auto array = accum::parse_idx(data, size, "fuzz");
        std::size_t count = 1;
        for (auto d : array.dims) count *= static_cast<std::size_t>(d);
        if (count != array.data.size()) __builtin_trap();
    } catch (const accum::DataError&) {
    }
    return 0;
}
// SPDX-License-Identifier: GPL-3.0-or-later
