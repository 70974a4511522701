#pragma once
// Datasets held whole in memory as tensors, or mapped from a file
// (data/tensor_file.h); a batch is an index_select of rows.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "accum/run_config.h"
#include "data/batch.h"

namespace accum {

enum class Task { ImageClassification, SequenceClassification, LanguageModeling, TabularClassification };

struct TensorDataset {
    std::string name;
    Task task = Task::ImageClassification;
    // In the dtypes of their source (int32 token ids of a mapped file, say):
    // gather() makes a batch's int64 and float32.
    torch::Tensor inputs;         // first dimension = samples
    torch::Tensor attention_mask; // token data only
    torch::Tensor token_type_ids; // token data, where the file has them
    torch::Tensor labels;
    std::vector<std::int64_t> items_per_sample; // label items per sample (1, or tokens for LM)
    std::int64_t num_classes = 0; // classes, or vocabulary size for LM
    std::int64_t vocab_size = 0;  // token data
    std::int64_t num_features = 0;// flattened input size (images, tabular)
    std::int64_t max_length = 0;  // token data

    std::int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
    Batch gather(const torch::Tensor& indices) const;
    Batch gather(const std::vector<std::int64_t>& indices) const;
};

struct DataSplits {
    TensorDataset train;
    TensorDataset eval;
    // What the reader decided that a user should hear once (a split kept
    // aside, a column the model will not take): the run logs them.
    std::vector<std::string> notes;
};

// Loads (or generates) the dataset the config names. Throws DataError.
DataSplits load_dataset(const RunConfig& config);

std::string default_fashion_mnist_dir();

// Generators, deterministic from the seed (exposed for tests).
DataSplits make_synthetic_pairs(std::uint64_t seed, std::int64_t train_size = kSyntheticPairsTrainSize,
                                std::int64_t eval_size = 1000);
DataSplits make_synthetic_lm(std::uint64_t seed, std::int64_t train_size = kSyntheticLmTrainSize,
                             std::int64_t eval_size = 400);
DataSplits load_fashion_mnist(const std::string& directory);
DataSplits load_csv_dataset(const std::string& path, const std::string& label_column, std::uint64_t seed);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
