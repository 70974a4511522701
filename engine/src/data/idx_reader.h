#pragma once
// IDX files (the MNIST format), plain or gzip-compressed. Torch-free.

#include <cstdint>
#include <string>
#include <vector>

namespace accum {

struct IdxArray {
    std::vector<std::int64_t> dims;
    std::vector<std::uint8_t> data; // unsigned bytes (type 0x08)
};

// Parses an IDX image from memory. `source` names it in errors. Throws DataError.
IdxArray parse_idx(const std::uint8_t* bytes, std::size_t size, const std::string& source);

// Reads a file, decompressing .gz. Throws DataError naming the file.
IdxArray read_idx_file(const std::string& path);

// Reads a whole file, gunzipping when it is gzip. Throws DataError.
std::vector<std::uint8_t> read_maybe_gzip(const std::string& path);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
