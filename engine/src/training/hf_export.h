// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A TorchScript module's weights back out under their Hugging Face names.
//
// The convention (examples/ writes such files): the TorchScript archive carries
// the extra files (torch.jit.save(..., _extra_files=...))
//   hf/config.json  the model's config as save_pretrained writes it;
//   hf/model.json   {"auto_class": "AutoModelForSequenceClassification" | ...,
//                    "parameter_prefix": "" | "model."}
// A module parameter's name minus parameter_prefix is its Hugging Face name.
// With them, a checkpoint holds model.safetensors and config.json beside the
// engine's files, so that AutoModelFor….from_pretrained(checkpoint) loads the
// trained model. A module without them gets neither.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace accum {

class Model;

struct HfMetadata {
    std::string config_json;      // hf/config.json, as it is
    std::string auto_class;       // hf/model.json "auto_class"
    std::string parameter_prefix; // hf/model.json "parameter_prefix"
    std::string module_file;      // the archive they came from
    bool present() const { return !config_json.empty(); }
};

// The metadata of the TorchScript archive `module_file` (its zip records, the
// module not loaded), or an empty one when it has none. Throws ConfigError
// naming the file and the key for a file that has one of the two extra files
// without the other, or a hf/model.json that is not what the convention says.
HfMetadata read_hf_metadata(const std::string& module_file);

// The files a checkpoint (or the output directory) gets for it: model.safetensors
// (the model's parameters and persistent buffers under parameter_prefix, the
// prefix removed; a tied tensor once, under the first name the module gives it,
// as save_pretrained keeps one of tied weights) and config.json. Throws
// ConfigError naming the module file when no parameter carries the prefix.
std::vector<std::pair<std::string, std::string>> hf_model_files(Model& model, const HfMetadata& meta);

// For each of model.named_parameters(), in order: trainer_no_decay of its name,
// a LayerNorm being a torch::nn::LayerNorm or, in a mirrored TorchScript module
// (whose classes are gone), a leaf with one 1-D weight, at most a bias of its
// size and no buffers.
std::vector<bool> trainer_no_decay_flags(Model& model);

// The safetensors file of named tensors (8-byte little-endian header length, the
// JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {"format": "pt"}},
// the raw little-endian data), tensors in name order.
struct NamedTensorBytes {
    std::string name;
    std::string dtype;                // F32, BF16, I64, …
    std::vector<std::int64_t> shape;
    std::string data;                 // little-endian, row-major
};
std::string safetensors_bytes(const std::vector<NamedTensorBytes>& tensors);

// Whether Transformers' Trainer keeps a parameter out of weight decay
// (Trainer.get_decay_parameter_names): its lower-cased name matches bias,
// layernorm, rmsnorm, a "norm" component or "_norm", or it belongs to a
// LayerNorm (`in_layer_norm`).
bool trainer_no_decay(const std::string& name, bool in_layer_norm);

} // namespace accum
