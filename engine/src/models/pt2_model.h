// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// --model FILE.pt2: a model's training step compiled by AOTInductor
// (examples/accum_pt2.py writes it from any nn.Module through torch.export; no
// TorchScript). The package holds two compiled graphs, "train" (parameters,
// buffers, batch, seed → loss, logits, one gradient per trained parameter, the
// buffers after the step) and "eval" (→ loss, logits), its initial weights
// (accum/weights.safetensors) and what its inputs and outputs are
// (extra/accum.json).
//
// Each micro-batch is one call of "train". Its loss enters the engine's
// autograd graph through a custom function whose backward hands back
// grad_output × the package's gradients: the styles' own loss.backward() (1/K
// scaling, token normalisation, the loss scaler) accumulates them into .grad,
// and everything after the backward is the engine's as for any model.
// Dropout draws its masks from the seed input: a new seed every micro-batch
// from the generator --seed seeds.
//
// Only the LibTorch 2.x build runs packages (compat::kPt2Packages); the 1.13
// build, and a package compiled by another torch release, are refused with the
// reason and the fix.

#include <memory>
#include <string>

#include "models/model.h"

namespace accum {

// Whether --model names an AOTInductor package (a .pt2 file).
bool is_pt2_package(const std::string& path);

// Throws DataError (exit 4) for a missing file; ConfigError (exit 2, naming
// the file) for one that is not such a package, one from another torch
// release, one whose batch does not fit the data, and in the 1.13 build.
std::shared_ptr<Model> load_pt2_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels);

} // namespace accum
