#include "data/idx_reader.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <zlib.h>

#include "accum/errors.h"

namespace accum {

namespace {

std::uint32_t big_endian_u32(const std::uint8_t* p) {
    return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::vector<std::uint8_t> read_maybe_gzip(const std::string& path) {
    std::ifstream probe(path, std::ios::binary);
    if (!probe)
        throw DataError(make_message(message_code::data_cannot_open, {{"path", path}, {"reason", std::strerror(errno)}}));
    unsigned char magic[2] = {0, 0};
    probe.read(reinterpret_cast<char*>(magic), 2);
    const bool gzip = probe.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (!gzip) {
        probe.clear();
        probe.seekg(0, std::ios::end);
        const auto size = static_cast<std::size_t>(probe.tellg());
        probe.seekg(0);
        std::vector<std::uint8_t> bytes(size);
        probe.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
        if (ends_with(path, ".gz") && size > 0)
            throw DataError(make_message(message_code::data_not_gzip, {{"path", path}}));
        return bytes;
    }
    probe.close();

    // Inflate with an explicit z_stream so that truncation is detected (gzread
    // silently returns what it has).
    std::ifstream in(path, std::ios::binary);
    std::vector<unsigned char> compressed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) throw corrupt_data(path, "zlib could not start");
    std::vector<std::uint8_t> out;
    out.reserve(compressed.size() * 4);
    zs.next_in = compressed.data();
    zs.avail_in = static_cast<uInt>(compressed.size());
    std::vector<unsigned char> chunk(1 << 20);
    int rc = Z_OK;
    while (true) {
        zs.next_out = chunk.data();
        zs.avail_out = static_cast<uInt>(chunk.size());
        rc = inflate(&zs, Z_NO_FLUSH);
        const std::size_t produced = chunk.size() - zs.avail_out;
        out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(produced));
        if (rc == Z_STREAM_END) {
            // Concatenated gzip members: continue if input remains.
            if (zs.avail_in > 0) {
                inflateReset(&zs);
                continue;
            }
            break;
        }
        if (rc == Z_OK) continue;
        if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
            inflateEnd(&zs);
            throw DataError(make_message(message_code::data_truncated, {{"path", path}}));
        }
        const std::string why = zs.msg ? zs.msg : "corrupt data";
        inflateEnd(&zs);
        throw corrupt_data(path, "corrupt gzip file (" + why + ")");
    }
    inflateEnd(&zs);
    return out;
}

IdxArray parse_idx(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
    if (size < 4) throw corrupt_data(source, "too short for an IDX file (" + std::to_string(size) + " bytes)");
    if (bytes[0] != 0 || bytes[1] != 0)
        throw corrupt_data(source, "wrong IDX magic number (the first two bytes must be zero)");
    if (bytes[2] != 0x08)
        throw corrupt_data(source, "unsupported IDX element type 0x" + std::to_string(int(bytes[2])) +
                        " (only unsigned bytes, 0x08, are supported)");
    const int ndims = bytes[3];
    if (ndims < 1 || ndims > 4) throw corrupt_data(source, "IDX dimension count " + std::to_string(ndims) + " is not 1..4");
    const std::size_t header = 4 + 4 * static_cast<std::size_t>(ndims);
    if (size < header) throw corrupt_data(source, "truncated IDX header");
    IdxArray array;
    std::uint64_t count = 1;
    for (int d = 0; d < ndims; ++d) {
        const std::uint32_t dim = big_endian_u32(bytes + 4 + 4 * d);
        if (dim > (1u << 28)) throw corrupt_data(source, "IDX dimension " + std::to_string(dim) + " is implausibly large");
        array.dims.push_back(dim);
        count *= dim;
        if (count > (std::uint64_t(1) << 34)) throw corrupt_data(source, "IDX array is implausibly large");
    }
    if (size - header < count)
        throw corrupt_data(source, "truncated IDX data (" + std::to_string(size - header) + " of " +
                        std::to_string(count) + " bytes)");
    if (size - header > count)
        throw corrupt_data(source, std::to_string(size - header - count) + " unexpected bytes after the IDX data");
    array.data.assign(bytes + header, bytes + header + count);
    return array;
}

IdxArray read_idx_file(const std::string& path) {
    const auto bytes = read_maybe_gzip(path);
    return parse_idx(bytes.data(), bytes.size(), path);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
