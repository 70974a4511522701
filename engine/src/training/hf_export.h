// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A TorchScript module's weights back out under their Hugging Face names.
//
// The convention (examples/ writes such files): the TorchScript archive carries
// the extra files (torch.jit.save(..., _extra_files=...))
//   hf/config.json  the model's config as save_pretrained writes it;
//   hf/model.json   {"auto_class": "AutoModelForSequenceClassification" | ...,
//                    "parameter_prefix": "" | "model.",
//                    "state_dict_keys": [the model's state_dict() keys, tied
//                                        duplicates left out] (optional)}
//   hf/tokenizer/F  each file tokenizer.save_pretrained writes (optional)
// A module parameter's name minus parameter_prefix is its Hugging Face name.
// With them, a checkpoint's model.safetensors holds the weights under their
// Hugging Face names (exactly state_dict_keys where the file lists them), and
// config.json and the tokenizer's files sit beside it, so that
// AutoModelFor….from_pretrained(checkpoint) and AutoTokenizer.from_pretrained(
// checkpoint) load them. A module without them gets its weights under the
// engine's names, as a built-in model does.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "training/tensor_files.h"

namespace accum {

class Model;

struct HfMetadata {
    std::string config_json;      // hf/config.json, as it is
    std::string auto_class;       // hf/model.json "auto_class"
    std::string parameter_prefix; // hf/model.json "parameter_prefix"
    std::vector<std::string> state_dict_keys; // hf/model.json "state_dict_keys" (empty: not given)
    std::vector<std::pair<std::string, std::string>> tokenizer_files; // hf/tokenizer/NAME: (NAME, bytes)
    std::string module_file;      // the archive they came from
    bool present() const { return !config_json.empty(); }
};

// The metadata of the TorchScript archive `module_file` (its zip records, the
// module not loaded), or an empty one when it has none. Throws ConfigError
// naming the file and the key for a file that has one of the two extra files
// without the other, or a hf/model.json that is not what the convention says.
HfMetadata read_hf_metadata(const std::string& module_file);

// What a checkpoint (and the output directory) holds of the model: the tensors
// of model.safetensors under the names the file gives them, and small files
// (config.json, the tokenizer's), each (file name, bytes).
struct ModelFiles {
    NamedTensors tensors;                              // model.safetensors (none for a LoRA module)
    std::vector<std::pair<std::string, std::string>> files;
    std::vector<std::pair<std::string, NamedTensors>> tensor_files; // other safetensors files (a LoRA adapter)
};

// For a module with metadata: its parameters and persistent buffers under
// parameter_prefix, the prefix removed (a tied tensor once, under the first
// name the module gives it, as save_pretrained keeps one of tied weights);
// exactly state_dict_keys where hf/model.json lists them. Without metadata:
// every parameter and buffer under the engine's name. Throws ConfigError naming
// the module file when no parameter carries the prefix or a listed key is not
// the module's.
ModelFiles model_files(Model& model, const HfMetadata& meta);

// The engine's name of each tensor model_files writes (the prefix put back).
std::string engine_name(const HfMetadata& meta, const std::string& file_name);

// For each of model.named_parameters(), in order: trainer_no_decay of its name,
// a LayerNorm being a torch::nn::LayerNorm or, in a mirrored TorchScript module
// (whose classes are gone), a leaf with one 1-D weight, at most a bias of its
// size and no buffers.
std::vector<bool> trainer_no_decay_flags(Model& model);

// Whether Transformers' Trainer keeps a parameter out of weight decay
// (Trainer.get_decay_parameter_names): its lower-cased name matches bias,
// layernorm, rmsnorm, a "norm" component or "_norm", or it belongs to a
// LayerNorm (`in_layer_norm`).
bool trainer_no_decay(const std::string& name, bool in_layer_norm);

} // namespace accum
