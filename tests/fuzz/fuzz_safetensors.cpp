// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the safetensors header parser must reject any bytes with a
// DataError, never crash, and every tensor it lets through must lie inside the
// bytes with shape × dtype size equal to its byte count.
#include <cstddef>
#include <cstdint>

#include "accum/errors.h"
#include "data/safetensors_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        for (const auto& e : accum::parse_safetensors(data, size, "fuzz")) {
            if (e.begin > e.end || e.end > size || e.begin < 8) __builtin_trap();
            std::uint64_t bytes = accum::safetensors_element_size(e.dtype);
            if (bytes == 0) __builtin_trap();
            for (auto d : e.shape) {
                if (d < 0) __builtin_trap();
                bytes *= static_cast<std::uint64_t>(d);
            }
            if (bytes != e.end - e.begin) __builtin_trap();
        }
    } catch (const accum::DataError&) {
    }
    return 0;
}
