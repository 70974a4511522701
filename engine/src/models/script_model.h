#pragma once
// --model FILE.pt: a TorchScript module the user made (torch.jit.script, or
// torch.jit.trace of a Transformers model with torchscript=True), trained as
// the built-in models are.
//
// Its forward is fed by argument name: input_ids / inputs / x … take the
// batch's inputs, attention_mask / mask its mask (all ones where the data has
// none), labels / targets / y its labels; an argument with a default that the
// data has nothing for is left out. It may return
//   - logits ([B, C] against labels [B], or [B, T, V] against [B, T]): the
//     engine's cross-entropy applies, as for its own models;
//   - a loss (a 0-dimensional tensor);
//   - what a Transformers model returns: a tuple (loss, logits, …) or a dict
//     with "loss" and "logits".
// At load, one forward over two training samples (no gradients) shows which,
// and whether a loss the module computes is the cross-entropy over its logits
// as they align with the labels, or one position on (a causal LM shifting its
// labels): that decides what counts as a label item, and so the token
// normalisation and the evaluation's accuracy.
//
// The module's parameters are registered under their own names as this
// Model's (tied ones once), so the optimizer, the checkpoints, the gradient
// sync and the memory anatomy see them as they see a built-in model's.

#include <memory>
#include <ostream>

#include "models/model.h"

namespace accum {

// Throws DataError (exit 4) for a missing file; ConfigError (exit 2, naming
// the file) for one torch.jit.load cannot read, a module without trainable
// parameters, a forward whose arguments or outputs do not fit the data, and a
// configuration that cannot apply to it.
std::shared_ptr<Model> load_script_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels);

// A model load_script_model made: writes the trained module to `out` as
// torch.jit.save writes it (the output directory keeps it once per run, for
// Python's torch.jit.load), its tensors from their own memory; true. Any other
// model: nothing written, false.
bool save_torchscript(Model& model, std::ostream& out);
// Whether `model` is one load_script_model made.
bool is_script_model(const Model& model);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
