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

} // namespace

void append_peft_adapter_files(Model& model, const std::string& module_file, ModelFiles& files) {
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
    NamedTensors entries; // streamed as model.safetensors is (tensor_files.h)
    for (const auto& [key, name] : weights) {
        const auto* p = parameters.find(name);
        if (p == nullptr)
            throw refuse(module_file, "hf/adapter.json: \"" + key + "\" is the parameter " + name +
                                          ", which the module does not have");
        entries.emplace_back(key, p->detach());
    }
    files.tensor_files.emplace_back("adapter_model.safetensors", std::move(entries));
    files.files.emplace_back("adapter_config.json", std::move(config));
}

} // namespace accum
