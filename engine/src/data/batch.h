#pragma once
// A batch as the models see it: batch["input_ids"], batch["attention_mask"], batch["labels"]
// (and batch["token_type_ids"] where the data has them).

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace accum {

struct Batch {
    torch::Tensor input_ids;      // images [B,1,28,28] float, tokens [B,T] int64, features [B,F] float
    torch::Tensor attention_mask; // [B,T] int64 for token data; undefined otherwise
    torch::Tensor token_type_ids; // [B,T] int64 where the data has them (a BERT tokenizer's); undefined otherwise
    torch::Tensor labels;         // [B] int64, or [B,T] int64 with -100 on padding (language modelling)
    std::int64_t size = 0;        // samples in the batch
    std::int64_t num_items = 0;   // label items that count for the loss (samples, or tokens != -100)
    std::vector<std::int64_t> samples; // the samples' indices in their split, in batch order (for messages)
    std::int64_t index = -1;           // its place in the epoch (DataLoader::batch), -1 when made otherwise

    Batch to(const torch::Device& device, bool non_blocking = false) const {
        if (device == input_ids.device()) return *this;
        Batch b = *this;
        b.input_ids = input_ids.to(device, non_blocking);
        if (attention_mask.defined()) b.attention_mask = attention_mask.to(device, non_blocking);
        if (token_type_ids.defined()) b.token_type_ids = token_type_ids.to(device, non_blocking);
        b.labels = labels.to(device, non_blocking);
        return b;
    }
};

inline constexpr std::int64_t kIgnoreIndex = -100;

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
