// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A checkpoint's tensor files, streamed to the disk from the tensors' own
// memory through io::FileWriter (checked_file.h), and read back:
//   safetensors  Hugging Face's format: an 8-byte little-endian header length,
//                the JSON header {name: {dtype, shape, data_offsets},
//                "__metadata__": {"format": "pt"}}, the raw little-endian data,
//                tensors in name order (model.safetensors);
//   torch.save   PyTorch's zip of data.pkl and data/{i}, one record per storage
//                (optimizer.pt, scheduler.pt), which Python's torch.load reads
//                with weights_only: its dicts and lists carry no type tags.
// The bound: writing adds no copy of a tensor that lives contiguous in CPU
// memory (each write(2) takes the storage's own bytes); a tensor on a GPU, or
// not contiguous, is copied to the host alone while it is written, so a save
// adds at most the largest such tensor, plus the headers (names and shapes).
// Every failure is a WriteError naming `shown` (the file as the checkpoint
// calls it).

#include <string>
#include <utility>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/types.h>

namespace accum {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// Throws WriteError; std::runtime_error for a dtype safetensors has no name for.
void write_safetensors(const std::string& path, const std::string& shown, const NamedTensors& tensors);
void write_torch_save(const std::string& path, const std::string& shown, const c10::IValue& value);

// torch.load(path, map_location="cpu") of a file torch.save wrote: each record
// read from the file into its own tensor. Throws c10::Error for a file that is
// not such a zip.
c10::IValue read_torch_save(const std::string& path);

// The tensors of a safetensors file, each a view of the file's read-only
// mapping (nothing copied until the caller copies it). Throws std::runtime_error naming
// the file and the problem (a truncated file, a header that does not fit).
NamedTensors read_safetensors_mapped(const std::string& path);

} // namespace accum
