// SPDX-License-Identifier: GPL-3.0-or-later
#include "training/hf_export.h"

#include <cctype>
#include <map>
#include <regex>
#include <stdexcept>
#include <unordered_set>

#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <torch/nn/modules/normalization.h>

#include "accum/errors.h"
#include "models/model.h"

namespace accum {

namespace {

using nlohmann::json;

constexpr const char* kConfigRecord = "extra/hf/config.json";
constexpr const char* kModelRecord = "extra/hf/model.json";

std::string record(caffe2::serialize::PyTorchStreamReader& reader, const char* name) {
    auto [data, size] = reader.getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
}

ConfigError refuse(const std::string& file, const std::string& problem) {
    return ConfigError(make_message(message_code::invalid_configuration,
                                    {{"option", "model"}, {"problem", file + ": " + problem}}));
}

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

NamedTensorBytes tensor_entry(std::string name, const torch::Tensor& t) {
    NamedTensorBytes e;
    e.name = std::move(name);
    const auto cpu = t.detach().to(torch::kCPU).contiguous();
    e.dtype = safetensors_dtype(cpu.scalar_type());
    e.shape = cpu.sizes().vec();
    // The CPUs LibTorch runs on are little-endian: the bytes are safetensors' order.
    e.data.assign(static_cast<const char*>(cpu.data_ptr()), cpu.numel() * cpu.element_size());
    return e;
}

// A leaf module that is a LayerNorm by its parameters: a 1-D weight, at most a
// bias of the same size, no buffers (BatchNorm has its running statistics).
bool looks_like_layer_norm(const torch::nn::Module& m) {
    if (!m.children().empty() || !m.buffers(false).empty()) return false;
    const auto params = m.named_parameters(false);
    const auto* weight = params.find("weight");
    if (weight == nullptr || weight->dim() != 1) return false;
    if (params.size() == 1) return true;
    const auto* bias = params.find("bias");
    return params.size() == 2 && bias != nullptr && bias->dim() == 1 && bias->size(0) == weight->size(0);
}

} // namespace

HfMetadata read_hf_metadata(const std::string& module_file) {
    HfMetadata meta;
    if (module_file.empty()) return meta;
    std::string config, model;
    try {
        caffe2::serialize::PyTorchStreamReader reader(module_file);
        if (reader.hasRecord(kConfigRecord)) config = record(reader, kConfigRecord);
        if (reader.hasRecord(kModelRecord)) model = record(reader, kModelRecord);
    } catch (const c10::Error& e) {
        throw refuse(module_file, std::string("cannot read its Hugging Face metadata (hf/config.json, hf/model.json): ") +
                                      error_text(e));
    }
    if (config.empty() && model.empty()) return meta;
    if (config.empty() || model.empty())
        throw refuse(module_file, std::string("has the extra file ") + (config.empty() ? "hf/model.json" : "hf/config.json") +
                                      " without " + (config.empty() ? "hf/config.json" : "hf/model.json") +
                                      "; the Hugging Face export needs both");
    bool object = false;
    try {
        object = json::parse(config).is_object();
    } catch (const std::exception& e) {
        throw refuse(module_file, std::string("hf/config.json is not JSON: ") + e.what());
    }
    if (!object) throw refuse(module_file, "hf/config.json is not a JSON object (a model's config)");
    try {
        const auto m = json::parse(model);
        meta.auto_class = m.at("auto_class").get<std::string>();
        meta.parameter_prefix = m.contains("parameter_prefix") ? m.at("parameter_prefix").get<std::string>() : "";
    } catch (const std::exception& e) {
        throw refuse(module_file, std::string("hf/model.json must be {\"auto_class\": \"AutoModelFor…\", "
                                              "\"parameter_prefix\": \"\" or \"model.\"}: ") + e.what());
    }
    if (meta.auto_class.rfind("AutoModel", 0) != 0)
        throw refuse(module_file, "hf/model.json: auto_class \"" + meta.auto_class +
                                      "\" is not a Transformers Auto class (AutoModelForSequenceClassification, …)");
    meta.config_json = std::move(config);
    meta.module_file = module_file;
    return meta;
}

std::string safetensors_bytes(const std::vector<NamedTensorBytes>& tensors) {
    std::map<std::string, const NamedTensorBytes*> by_name;
    for (const auto& t : tensors) by_name.emplace(t.name, &t);
    json header = json::object();
    header["__metadata__"] = {{"format", "pt"}};
    std::size_t offset = 0;
    for (const auto& [name, t] : by_name) {
        header[name] = {{"dtype", t->dtype}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->data.size()}}};
        offset += t->data.size();
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned, as safetensors pads it
    std::string out;
    out.reserve(8 + text.size() + offset);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    out += text;
    for (const auto& [name, t] : by_name) out += t->data;
    return out;
}

std::vector<std::pair<std::string, std::string>> hf_model_files(Model& model, const HfMetadata& meta) {
    const auto& prefix = meta.parameter_prefix;
    std::vector<NamedTensorBytes> entries;
    auto take = [&](const std::string& name, const torch::Tensor& t) {
        if (name.compare(0, prefix.size(), prefix) == 0) entries.push_back(tensor_entry(name.substr(prefix.size()), t));
    };
    // Tied tensors are registered once by the module's mirror (its first name).
    for (const auto& p : model.named_parameters()) take(p.key(), p.value());
    const auto parameters = entries.size();
    for (const auto& b : model.named_buffers()) take(b.key(), b.value());
    if (parameters == 0)
        throw refuse(meta.module_file, "hf/model.json's parameter_prefix \"" + prefix +
                                           "\" begins no parameter's name (a module parameter's name minus the "
                                           "prefix is its Hugging Face name)");
    return {{"model.safetensors", safetensors_bytes(entries)}, {"config.json", meta.config_json}};
}

bool trainer_no_decay(const std::string& name, bool in_layer_norm) {
    if (in_layer_norm) return true;
    std::string lower = name;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static const std::regex patterns(R"(bias|layernorm|rmsnorm|(?:^|\.)norm(?:$|\.)|_norm(?:$|\.))");
    return std::regex_search(lower, patterns);
}

std::vector<bool> trainer_no_decay_flags(Model& model) {
    std::unordered_set<const c10::TensorImpl*> layer_norm;
    for (const auto& m : model.modules(/*include_self=*/false))
        if (m->as<torch::nn::LayerNorm>() || looks_like_layer_norm(*m))
            for (const auto& p : m->parameters(/*recurse=*/false)) layer_norm.insert(p.unsafeGetTensorImpl());
    std::vector<bool> flags;
    for (const auto& p : model.named_parameters())
        flags.push_back(trainer_no_decay(p.key(), layer_norm.count(p.value().unsafeGetTensorImpl()) > 0));
    return flags;
}

} // namespace accum
