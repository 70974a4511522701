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
constexpr const char* kTokenizerRecords = "extra/hf/tokenizer/";

std::string record(caffe2::serialize::PyTorchStreamReader& reader, const char* name) {
    auto [data, size] = reader.getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
}

ConfigError refuse(const std::string& file, const std::string& problem) {
    return ConfigError(make_message(message_code::invalid_configuration,
                                    {{"option", "model"}, {"problem", file + ": " + problem}}));
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
        const std::string prefix = kTokenizerRecords;
        for (const auto& name : reader.getAllRecords())
            if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size() &&
                name.find('/', prefix.size()) == std::string::npos)
                meta.tokenizer_files.emplace_back(name.substr(prefix.size()), record(reader, name.c_str()));
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
        if (m.contains("state_dict_keys")) meta.state_dict_keys = m.at("state_dict_keys").get<std::vector<std::string>>();
    } catch (const std::exception& e) {
        throw refuse(module_file, std::string("hf/model.json must be {\"auto_class\": \"AutoModelFor…\", "
                                              "\"parameter_prefix\": \"\" or \"model.\", "
                                              "\"state_dict_keys\": [names]}: ") + e.what());
    }
    if (meta.auto_class.rfind("AutoModel", 0) != 0)
        throw refuse(module_file, "hf/model.json: auto_class \"" + meta.auto_class +
                                      "\" is not a Transformers Auto class (AutoModelForSequenceClassification, …)");
    meta.config_json = std::move(config);
    meta.module_file = module_file;
    return meta;
}

ModelFiles model_files(Model& model, const HfMetadata& meta) {
    ModelFiles out;
    if (!meta.present()) {
        for (const auto& p : model.named_parameters()) out.tensors.emplace_back(p.key(), p.value());
        for (const auto& b : model.named_buffers()) out.tensors.emplace_back(b.key(), b.value());
        return out;
    }
    const auto& prefix = meta.parameter_prefix;
    std::map<std::string, torch::Tensor> named; // Hugging Face name → tensor
    std::size_t parameters = 0;
    // Tied tensors are registered once by the module's mirror (its first name).
    for (const auto& p : model.named_parameters())
        if (p.key().compare(0, prefix.size(), prefix) == 0) {
            named.emplace(p.key().substr(prefix.size()), p.value());
            ++parameters;
        }
    for (const auto& b : model.named_buffers())
        if (b.key().compare(0, prefix.size(), prefix) == 0) named.emplace(b.key().substr(prefix.size()), b.value());
    if (parameters == 0)
        throw refuse(meta.module_file, "hf/model.json's parameter_prefix \"" + prefix +
                                           "\" begins no parameter's name (a module parameter's name minus the "
                                           "prefix is its Hugging Face name)");
    if (meta.state_dict_keys.empty()) {
        for (auto& [name, t] : named) out.tensors.emplace_back(name, t);
    } else {
        // Exactly the model's state_dict(): a non-persistent buffer the trace
        // kept (BERT's position_ids, token_type_ids) stays out.
        for (const auto& key : meta.state_dict_keys) {
            const auto found = named.find(key);
            if (found == named.end())
                throw refuse(meta.module_file, "hf/model.json's state_dict_keys lists \"" + key +
                                                   "\", which the module has no parameter or buffer for (as " +
                                                   prefix + key + ")");
            out.tensors.emplace_back(key, found->second);
        }
    }
    out.files.emplace_back("config.json", meta.config_json);
    for (const auto& file : meta.tokenizer_files) out.files.push_back(file);
    return out;
}

std::string engine_name(const HfMetadata& meta, const std::string& file_name) {
    return meta.present() ? meta.parameter_prefix + file_name : file_name;
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
