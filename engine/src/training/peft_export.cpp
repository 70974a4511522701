// SPDX-License-Identifier: GPL-3.0-or-later
#include "training/peft_export.h"

#include <map>

#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>

#include "accum/errors.h"
#include "models/model.h"
#include "training/hf_export.h"

namespace accum {

namespace {

constexpr const char* kAdapterRecord = "extra/hf/adapter.json";
constexpr const char* kAdapterConfigRecord = "extra/hf/adapter_config.json";

ConfigError refuse(const std::string& file, const std::string& problem) {
    return ConfigError(make_message(message_code::invalid_configuration,
                                    {{"option", "model"}, {"problem", file + ": " + problem}}));
}

std::string record(caffe2::serialize::PyTorchStreamReader& reader, const char* name) {
    auto [data, size] = reader.getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
}

// safetensors' entry of a tensor, as it is on the CPU.
NamedTensorBytes entry(std::string name, const torch::Tensor& t) {
    NamedTensorBytes e;
    e.name = std::move(name);
    const auto cpu = t.detach().to(torch::kCPU).contiguous();
    switch (cpu.scalar_type()) {
    case torch::kFloat32: e.dtype = "F32"; break;
    case torch::kBFloat16: e.dtype = "BF16"; break;
    case torch::kFloat16: e.dtype = "F16"; break;
    case torch::kFloat64: e.dtype = "F64"; break;
    default: throw std::runtime_error("adapter weight " + e.name + ": no safetensors dtype for " + c10::toString(cpu.scalar_type()));
    }
    e.shape = cpu.sizes().vec();
    e.data.assign(static_cast<const char*>(cpu.data_ptr()), cpu.numel() * cpu.element_size());
    return e;
}

} // namespace

void append_peft_adapter_files(Model& model, const std::string& module_file,
                               std::vector<std::pair<std::string, std::string>>& files) {
    if (module_file.empty()) return;
    std::string adapter, config;
    try {
        caffe2::serialize::PyTorchStreamReader reader(module_file);
        if (!reader.hasRecord(kAdapterRecord)) return;
        adapter = record(reader, kAdapterRecord);
        if (reader.hasRecord(kAdapterConfigRecord)) config = record(reader, kAdapterConfigRecord);
    } catch (const c10::Error& e) {
        throw refuse(module_file, std::string("cannot read its LoRA adapter files (hf/adapter.json): ") + error_text(e));
    }
    if (config.empty())
        throw refuse(module_file, "has hf/adapter.json without hf/adapter_config.json; the adapter's export needs both");
    std::map<std::string, std::string> weights; // saved key → module parameter
    try {
        const auto j = nlohmann::json::parse(adapter);
        for (const auto& [key, name] : j.at("weights").items()) weights.emplace(key, name.get<std::string>());
        if (!nlohmann::json::parse(config).is_object()) throw std::runtime_error("adapter_config.json is no object");
    } catch (const std::exception& e) {
        throw refuse(module_file, std::string("hf/adapter.json must be {\"weights\": {PEFT's key: the module's "
                                              "parameter}, ...} beside a JSON hf/adapter_config.json: ") + e.what());
    }
    if (weights.empty()) throw refuse(module_file, "hf/adapter.json maps no weights");
    const auto parameters = model.named_parameters();
    std::vector<NamedTensorBytes> entries;
    for (const auto& [key, name] : weights) {
        const auto* p = parameters.find(name);
        if (p == nullptr)
            throw refuse(module_file, "hf/adapter.json: \"" + key + "\" is the parameter " + name +
                                          ", which the module does not have");
        entries.push_back(entry(key, *p));
    }
    files.emplace_back("adapter_model.safetensors", safetensors_bytes(entries));
    files.emplace_back("adapter_config.json", std::move(config));
}

} // namespace accum
