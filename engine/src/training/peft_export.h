// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A LoRA module's adapter back out as PEFT saves it.
//
// examples/hf_to_accum.py --lora-r wraps the model with peft.get_peft_model
// before tracing and puts two more extra files in the TorchScript archive:
//   hf/adapter_config.json  the adapter's config as PeftModel.save_pretrained writes it;
//   hf/adapter.json         {"adapter_name": "default",
//                            "weights": {PEFT's saved key: the module's parameter name, ...},
//                            "trainable": [the module's parameters that require grad]}
// The saved keys are PEFT's without the adapter's name
// (base_model.model.….lora_A.weight; a modules_to_save head under its own
// name), so adapter_model.safetensors is what PeftModel.save_pretrained writes
// and PeftModel.from_pretrained(source_model, DIR) and the Trainer's resume of a
// PEFT model load it. A module without them gets no adapter files.
// A LoRA run's checkpoints and output hold the adapter instead of the whole
// model, as the Trainer's of a PEFT model do: the frozen base stays in the
// run's module (--model, and model.torchscript.pt at the end), and --resume
// takes the trainable parameters from adapter_model.safetensors.

#include <string>

#include "training/hf_export.h"

namespace accum {

class Model;

inline constexpr const char* kAdapterWeightsFile = "adapter_model.safetensors";

// Puts adapter_model.safetensors (the mapped parameters' current values, as
// they are: the adapter trains in float32; streamed as model.safetensors is) and
// adapter_config.json to `files`, and takes out model.safetensors's tensors
// and config.json, when the module file `module_file` carries hf/adapter.json
// (`files` is then PeftModel.save_pretrained's, with the tokenizer's). Throws ConfigError
// naming the file and the key when hf/adapter.json is not what the convention
// says, or names a parameter the model does not have, or comes without
// hf/adapter_config.json.
void use_peft_adapter_files(Model& model, const std::string& module_file, ModelFiles& files);

// Copies adapter_model.safetensors `adapter_file` (a checkpoint's) into the
// parameters hf/adapter.json of `module_file` maps its keys to. Throws
// std::runtime_error naming the key when the module has no adapter, the file
// holds a key the adapter lacks or in another shape, or a trainable parameter
// is not in it; ConfigError as use_peft_adapter_files for a bad hf/adapter.json.
void load_peft_adapter(Model& model, const std::string& module_file, const std::string& adapter_file);

} // namespace accum
