#pragma once
// --dataset tensors --data FILE.pt: named tensors saved from Python with
// torch.save, the way a user's own data usually is by the time it is tokenized:
//
//   torch.save({"input_ids": ids, "attention_mask": mask, "labels": labels,
//               "eval_input_ids": …, "eval_attention_mask": …, "eval_labels": …}, "data.pt")
//
// "inputs" may stand for "input_ids" (images or feature rows), "label" for
// "labels", and token_type_ids may come with token ids: a tokenizer's output
// as it is. The eval split is optional and may also be given as nested dicts
// named as Hugging Face datasets name their splits: {"train": {…},
// "validation": {…}, "test": {…}} ("eval" for "validation"); the run
// evaluates on the validation split, or on the test split when there is none.
// What the tensors are decides the task: integer inputs with labels [N] are
// sequence classification, with labels [N, T] language modelling (−100 marks
// a label item that does not count); float inputs [N, C, H, W] are images, any
// other float inputs feature rows. Every problem is a DataError naming the file
// and the key.
//
// --data FILE.safetensors holds the same tensors under the same names, nested
// splits flattened with a dot ("train.input_ids", "validation.labels"). It is
// mapped, not read (data/safetensors_reader.h): the splits' tensors are views of
// the mapping in the file's dtypes, and no step of loading or training copies or
// converts a whole tensor (batches are converted as they are gathered, scans
// go by chunks of rows), so the process's anonymous memory does not grow with
// the file.

#include <functional>
#include <string>

#include "data/dataset.h"

namespace accum {

// Reads FILE.pt. A split absent from the file is left empty (size() == 0).
// Throws DataError: a missing file, one that torch.save did not write, keys or
// shapes or dtypes that do not fit.
DataSplits load_tensor_file(const std::string& path);

// The torch dtype of a safetensors dtype name that parse_safetensors let through ("F32", "I64", …).
torch::ScalarType safetensors_scalar_type(const std::string& dtype);

// The label items of each sample (items_per_sample): 1 for a class label, else
// the labels other than -100 from position `from` on. A model that shifts its
// labels itself (a causal LM computing its own loss, as Transformers' do:
// logits at t against the label at t + 1) counts from 1 (build_run_parts).
void count_label_items(TensorDataset& data, std::int64_t from = 0);

// fn(first_row, rows) over consecutive slices of `t`'s first dimension of about
// 2^20 elements: a scan whose temporaries are a chunk's, not the tensor's size.
void for_row_chunks(const torch::Tensor& t, const std::function<void(std::int64_t, const torch::Tensor&)>& fn);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
