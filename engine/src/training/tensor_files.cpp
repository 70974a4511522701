// SPDX-License-Identifier: GPL-3.0-or-later
#include "training/tensor_files.h"

#include <map>
#include <memory>
#include <stdexcept>

#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "accum/errors.h"
#include "checked_file.h"
#include "data/safetensors_reader.h"

namespace accum {

namespace {

// safetensors' name of a dtype.
std::string safetensors_dtype(torch::ScalarType t) {
    switch (t) {
    case torch::kFloat32: return "F32";
    case torch::kFloat64: return "F64";
    case torch::kFloat16: return "F16";
    case torch::kBFloat16: return "BF16";
    case torch::kInt64: return "I64";
    case torch::kInt32: return "I32";
    case torch::kInt16: return "I16";
    case torch::kInt8: return "I8";
    case torch::kUInt8: return "U8";
    case torch::kBool: return "BOOL";
    default: throw std::runtime_error(std::string("safetensors has no dtype for ") + c10::toString(t));
    }
}

torch::ScalarType scalar_type_of(const std::string& dtype) {
    static const std::map<std::string, torch::ScalarType> types{
        {"F32", torch::kFloat32}, {"F64", torch::kFloat64}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
        {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
        {"U8", torch::kUInt8},    {"BOOL", torch::kBool}};
    return types.at(dtype); // parse_safetensors lets only these through
}

// The tensor's bytes as the file holds them: its own memory when it lives
// contiguous on the CPU, else a host copy of it alone.
torch::Tensor host_contiguous(const torch::Tensor& t) {
    auto out = t.detach();
    if (!out.device().is_cpu()) out = out.to(torch::kCPU);
    return out.contiguous();
}

} // namespace

void write_safetensors(const std::string& path, const std::string& shown, const NamedTensors& tensors) {
    std::map<std::string, const torch::Tensor*> by_name;
    for (const auto& [name, t] : tensors) by_name.emplace(name, &t);
    nlohmann::json header = nlohmann::json::object();
    header["__metadata__"] = {{"format", "pt"}};
    std::uint64_t offset = 0;
    for (const auto& [name, t] : by_name) {
        const std::uint64_t bytes = static_cast<std::uint64_t>(t->numel()) * t->element_size();
        header[name] = {{"dtype", safetensors_dtype(t->scalar_type())},
                        {"shape", t->sizes().vec()},
                        {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned, as safetensors pads it
    std::string head(8, '\0');
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) head[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    io::FileWriter file(path, shown);
    file.write(head + text);
    for (const auto& [name, t] : by_name) {
        const auto data = host_contiguous(*t);
        // The CPUs LibTorch runs on are little-endian: the bytes are safetensors' order.
        file.write(std::string_view(static_cast<const char*>(data.data_ptr()), data.numel() * data.element_size()));
    }
    file.finish();
}

void write_torch_save(const std::string& path, const std::string& shown, const c10::IValue& value) {
    std::string pickle;
    torch::jit::Pickler pickler([&pickle](const char* data, std::size_t size) { pickle.append(data, size); },
                                nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(value);
    pickler.stop();
    io::FileWriter file(path, shown);
    {
        // The zip writer is handed each record's memory and passes it on to the
        // file; a failure is kept by the file, never seen by the writer (which
        // would throw from its destructor), and thrown by finish().
        caffe2::serialize::PyTorchStreamWriter writer(
            [&file](const void* data, std::size_t size) { return file.write_or_keep_failure(data, size); });
        writer.writeRecord("data.pkl", pickle.data(), pickle.size());
        std::size_t i = 0;
        for (const auto& tensor : pickler.tensorData()) {
            // The storage's own bytes on the CPU; a GPU storage's host copy, alone.
            const auto data = torch::jit::getWriteableTensorData(tensor);
            writer.writeRecord("data/" + std::to_string(i++), data.data(), data.sizeInBytes());
        }
        writer.writeEndOfFile();
    }
    file.finish();
}

c10::IValue read_torch_save(const std::string& path) {
    caffe2::serialize::PyTorchStreamReader reader(path);
    return torch::jit::readArchiveAndTensors("data", /*pickle_prefix=*/"", /*tensor_prefix=*/"", {}, {},
                                             torch::Device(torch::kCPU), reader);
}

NamedTensors read_safetensors_mapped(const std::string& path) {
    std::shared_ptr<const MappedFile> mapping;
    std::vector<SafetensorsEntry> entries;
    try {
        mapping = std::make_shared<const MappedFile>(path);
        entries = parse_safetensors(mapping->data(), mapping->size(), path);
    } catch (const DataError& e) {
        // A checkpoint's file, not the run's data: the caller says which checkpoint.
        throw std::runtime_error(e.what());
    }
    NamedTensors out;
    for (const auto& e : entries) {
        // from_blob never writes: the pointer is const only to the mapping's type.
        auto* at = const_cast<std::uint8_t*>(mapping->data() + e.begin);
        out.emplace_back(e.name, torch::from_blob(at, e.shape, [mapping](void*) {},
                                                  torch::TensorOptions().dtype(scalar_type_of(e.dtype))));
    }
    return out;
}

} // namespace accum
