// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// safetensors files (Hugging Face's format), torch-free: an 8-byte
// little-endian header size N, N bytes of JSON
//   {"NAME": {"dtype": "I64", "shape": [N, T], "data_offsets": [BEGIN, END]}, …,
//    "__metadata__": {…}}
// then the tensors' raw little-endian bytes, offsets counted from the end of
// the header. The file is mapped read-only, never read into memory: the
// tensors (data/tensor_file.cpp) point into the mapping.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace accum {

struct SafetensorsEntry {
    std::string name;
    std::string dtype; // as the header writes it: "I64", "F32", "BOOL", …
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0; // byte offsets from the start of the file (not of the data)
    std::uint64_t end = 0;
};

// The dtypes the engine can use and their sizes in bytes; 0 for any other.
std::size_t safetensors_element_size(const std::string& dtype);

// Parses and checks the header of a safetensors file of `size` bytes held at
// `bytes`: every entry's dtype known to the engine, its shape × dtype size its
// byte count, its bytes inside the file. `path` names the file in errors.
// Throws DataError naming the file, the tensor and the problem.
std::vector<SafetensorsEntry> parse_safetensors(const std::uint8_t* bytes, std::size_t size, const std::string& path);

// Whether `path` is read as safetensors: its name ends in .safetensors, or its
// first bytes are a header size that fits the file followed by '{' (a
// torch.save file begins with a zip or pickle signature instead).
bool is_safetensors_file(const std::string& path);

// A whole file mapped read-only (PROT_READ, MAP_PRIVATE). Its pages are the
// page cache's, read on demand and dropped under memory pressure: they count
// in a process's RssFile, not its anonymous memory.
class MappedFile {
public:
    explicit MappedFile(const std::string& path); // throws DataError naming the file
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace accum
