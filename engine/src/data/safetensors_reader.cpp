// SPDX-License-Identifier: GPL-3.0-or-later
#include "data/safetensors_reader.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "accum/errors.h"

namespace accum {

namespace {

using nlohmann::json;

constexpr const char* kUsable = "BOOL, U8, I8, I16, I32, I64, F16, BF16, F32, F64";

std::string kind_of(const json& j) { return j.type_name(); }

std::uint64_t header_size(const std::uint8_t* bytes) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
    return n;
}

} // namespace

std::size_t safetensors_element_size(const std::string& dtype) {
    if (dtype == "BOOL" || dtype == "U8" || dtype == "I8") return 1;
    if (dtype == "I16" || dtype == "F16" || dtype == "BF16") return 2;
    if (dtype == "I32" || dtype == "F32") return 4;
    if (dtype == "I64" || dtype == "F64") return 8;
    return 0;
}

std::vector<SafetensorsEntry> parse_safetensors(const std::uint8_t* bytes, std::size_t size, const std::string& path) {
    auto bad = [&](const std::string& problem) { return corrupt_data(path, problem); };
    if (size < 8)
        throw bad("is " + std::to_string(size) +
                  " bytes long; a safetensors file begins with an 8-byte header size, then its JSON header");
    const std::uint64_t n = header_size(bytes);
    if (n > size - 8)
        throw bad("its header size (" + std::to_string(n) + " bytes) runs past the end of the file (" +
                  std::to_string(size) + " bytes): the file is truncated or not safetensors");
    const auto* text = reinterpret_cast<const char*>(bytes + 8);
    json header;
    try {
        header = json::parse(text, text + n);
    } catch (const json::exception& e) {
        throw bad("its header is not JSON (" + std::string(e.what()) + ")");
    }
    if (!header.is_object())
        throw bad("its header is a JSON " + kind_of(header) + ", not an object of named tensors");
    const std::uint64_t data_start = 8 + n;
    const std::uint64_t data_size = size - data_start;
    std::vector<SafetensorsEntry> entries;
    for (const auto& item : header.items()) {
        const std::string& name = item.key();
        const json& value = item.value();
        if (name == "__metadata__") continue; // free-form strings: nothing the engine reads
        auto bad_tensor = [&](const std::string& problem) { return bad("tensor '" + name + "' " + problem); };
        if (!value.is_object())
            throw bad_tensor("is a JSON " + kind_of(value) + " in the header, not {\"dtype\", \"shape\", \"data_offsets\"}");
        SafetensorsEntry e;
        e.name = name;
        const auto dtype = value.find("dtype");
        if (dtype == value.end() || !dtype->is_string()) throw bad_tensor("has no \"dtype\" string");
        e.dtype = dtype->get<std::string>();
        const std::size_t element = safetensors_element_size(e.dtype);
        if (element == 0)
            throw bad_tensor("has dtype " + e.dtype + ", which the engine cannot use (it reads " + kUsable + ")");
        const auto shape = value.find("shape");
        if (shape == value.end() || !shape->is_array()) throw bad_tensor("has no \"shape\" array");
        // numel × element size, refused before it can overflow: no file holds 2^62 bytes.
        std::uint64_t bytes_needed = element;
        constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
        for (const auto& d : *shape) {
            if (!d.is_number_unsigned() || d.get<std::uint64_t>() > kLimit)
                throw bad_tensor("has shape " + shape->dump() + "; its sizes are integers of 0 or more");
            const auto extent = d.get<std::uint64_t>();
            e.shape.push_back(static_cast<std::int64_t>(extent));
            if (extent != 0 && bytes_needed > kLimit / extent)
                throw bad_tensor("has shape " + shape->dump() + ", larger than any file");
            bytes_needed *= extent;
        }
        const auto offsets = value.find("data_offsets");
        if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
            !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
            throw bad_tensor("has no \"data_offsets\" [begin, end] of two integers");
        const auto begin = (*offsets)[0].get<std::uint64_t>(), end = (*offsets)[1].get<std::uint64_t>();
        if (begin > end || end > data_size)
            throw bad_tensor("has data_offsets " + offsets->dump() + " outside the data (" + std::to_string(data_size) +
                             " bytes after the header)");
        if (end - begin != bytes_needed)
            throw bad_tensor("has shape " + shape->dump() + " of " + e.dtype + " (" + std::to_string(bytes_needed) +
                             " bytes) but data_offsets " + offsets->dump() + " hold " + std::to_string(end - begin) +
                             " bytes");
        e.begin = data_start + begin;
        e.end = data_start + end;
        entries.push_back(std::move(e));
    }
    return entries;
}

bool is_safetensors_file(const std::string& path) {
    const std::string suffix = ".safetensors";
    if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    std::ifstream in(path, std::ios::binary);
    std::uint8_t head[9] = {};
    if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return false;
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uint64_t>(in.tellg());
    return head[8] == '{' && header_size(head) <= size - 8;
}

MappedFile::MappedFile(const std::string& path) {
    auto cannot = [&](const std::string& reason) {
        return DataError(make_message(message_code::data_cannot_open, {{"path", path}, {"reason", reason}}));
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw cannot(std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw cannot(std::strerror(err));
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
        // MAP_PRIVATE and PROT_READ: the engine never writes through it, and the
        // file's pages stay the page cache's.
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw cannot(std::string("mmap: ") + std::strerror(err));
        }
        data_ = static_cast<const std::uint8_t*>(p);
    }
    ::close(fd); // the mapping keeps the file open
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

} // namespace accum
