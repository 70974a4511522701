// SPDX-License-Identifier: GPL-3.0-or-later
#include "training/peft_export.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

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

// The module file's adapter: PEFT's saved key → the module's parameter, and
// adapter_config.json's text; both empty for a module without hf/adapter.json.
struct Adapter {
    std::map<std::string, std::string> weights;
    std::string config;
};

Adapter read_adapter(const std::string& module_file) {
    Adapter out;
    if (module_file.empty()) return out;
    std::string adapter;
    try {
        caffe2::serialize::PyTorchStreamReader reader(module_file);
        if (!reader.hasRecord(kAdapterRecord)) return out;
        adapter = record(reader, kAdapterRecord);
        if (reader.hasRecord(kAdapterConfigRecord)) out.config = record(reader, kAdapterConfigRecord);
    } catch (const c10::Error& e) {
        throw refuse(module_file, std::string("cannot read its LoRA adapter files (hf/adapter.json): ") + error_text(e));
    }
    if (out.config.empty())
        throw refuse(module_file, "has hf/adapter.json without hf/adapter_config.json; the adapter's export needs both");
    try {
        const auto j = nlohmann::json::parse(adapter);
        for (const auto& [key, name] : j.at("weights").items()) out.weights.emplace(key, name.get<std::string>());
        if (!nlohmann::json::parse(out.config).is_object()) throw std::runtime_error("adapter_config.json is no object");
    } catch (const std::exception& e) {
        throw refuse(module_file, std::string("hf/adapter.json must be {\"weights\": {PEFT's key: the module's "
                                              "parameter}, ...} beside a JSON hf/adapter_config.json: ") + e.what());
    }
    if (out.weights.empty()) throw refuse(module_file, "hf/adapter.json maps no weights");
    return out;
}

} // namespace

void use_peft_adapter_files(Model& model, const std::string& module_file, ModelFiles& files) {
    auto adapter = read_adapter(module_file);
    if (adapter.weights.empty()) return;
    const auto parameters = model.named_parameters();
    NamedTensors entries; // streamed as model.safetensors is (tensor_files.h)
    for (const auto& [key, name] : adapter.weights) {
        const auto* p = parameters.find(name);
        if (p == nullptr)
            throw refuse(module_file, "hf/adapter.json: \"" + key + "\" is the parameter " + name +
                                          ", which the module does not have");
        entries.emplace_back(key, p->detach());
    }
    // PeftModel.save_pretrained's files instead of the whole model's: no
    // model.safetensors (the frozen base stays in the run's module) and no
    // config.json, as the Trainer's checkpoint of a PEFT model.
    files.tensors.clear();
    files.files.erase(std::remove_if(files.files.begin(), files.files.end(),
                                     [](const auto& f) { return f.first == "config.json"; }),
                      files.files.end());
    files.tensor_files.emplace_back(kAdapterWeightsFile, std::move(entries));
    files.files.emplace_back("adapter_config.json", std::move(adapter.config));
}

void load_peft_adapter(Model& model, const std::string& module_file, const std::string& adapter_file) {
    const auto adapter = read_adapter(module_file);
    if (adapter.weights.empty())
        throw std::runtime_error(
            "it is a LoRA adapter, and this run's " +
            (module_file.empty() ? std::string("model is a built-in one")
                                 : "module " + module_file + " carries none (no hf/adapter.json)") +
            ": resume with the LoRA module it was trained from");
    const auto parameters = model.named_parameters();
    std::set<std::string> loaded;
    torch::NoGradGuard no_grad;
    for (const auto& [key, saved] : read_safetensors_mapped(adapter_file)) {
        const auto found = adapter.weights.find(key);
        const auto* p = found == adapter.weights.end() ? nullptr : parameters.find(found->second);
        if (p == nullptr) throw std::runtime_error("it holds " + key + ", which this run's adapter does not have");
        if (p->sizes() != saved.sizes())
            throw std::runtime_error(key + " has the shape " + c10::str(saved.sizes()) + ", this run's adapter " +
                                     c10::str(p->sizes()));
        p->copy_(saved); // from the file's mapping, tensor by tensor
        loaded.insert(found->second);
    }
    // Every parameter that trains must come back: the module holds the others
    // as they were converted, which is what they still are (frozen).
    for (const auto& p : model.named_parameters())
        if (p.value().requires_grad() && loaded.count(p.key()) == 0)
            throw std::runtime_error("it has no weights for the trainable parameter " + p.key());
}

} // namespace accum
