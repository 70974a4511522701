#include "data/dataset.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include <ATen/Parallel.h>

#include "accum/errors.h"
#include "data/csv_reader.h"
#include "data/idx_reader.h"
#include "data/tensor_file.h"

namespace accum {

namespace {

// source.index_select(0, indices) for a contiguous CPU source: whole rows copied,
// split between LibTorch's intra-op threads once a share holds about 64 KiB.
// index_select parallelises only from much larger batches, so a micro-batch of
// 64 images was gathered on one thread, K times per optimizer step.
torch::Tensor gather_rows(const torch::Tensor& source, const torch::Tensor& indices) {
    if (!source.device().is_cpu() || !source.is_contiguous() || source.dim() == 0)
        return source.index_select(0, indices);
    auto sizes = source.sizes().vec();
    sizes[0] = indices.size(0);
    auto out = torch::empty(sizes, source.options());
    const auto row_bytes = source.stride(0) * static_cast<std::int64_t>(source.element_size());
    const auto* from = static_cast<const char*>(source.data_ptr());
    auto* to = static_cast<char*>(out.data_ptr());
    const auto* idx = indices.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < indices.size(0); ++i)
        if (idx[i] < 0 || idx[i] >= source.size(0))
            throw DataError("sample index " + std::to_string(idx[i]) + " is out of range");
    const auto grain = std::max<std::int64_t>(1, (std::int64_t{64} << 10) / std::max<std::int64_t>(1, row_bytes));
    at::parallel_for(0, indices.size(0), grain, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i)
            std::memcpy(to + i * row_bytes, from + idx[i] * row_bytes, static_cast<std::size_t>(row_bytes));
    });
    return out;
}

} // namespace

Batch TensorDataset::gather(const torch::Tensor& indices) const {
    // The split's tensors may keep a file's dtypes (int32 token ids, uint8
    // labels, float64 features): only the gathered rows become the batch's.
    auto as = [](torch::Tensor t, torch::ScalarType type) { return t.scalar_type() == type ? t : t.to(type); };
    Batch b;
    b.input_ids = gather_rows(inputs, indices);
    b.input_ids = as(b.input_ids, b.input_ids.is_floating_point() ? torch::kFloat32 : torch::kInt64);
    if (attention_mask.defined()) b.attention_mask = as(gather_rows(attention_mask, indices), torch::kInt64);
    if (token_type_ids.defined()) b.token_type_ids = as(gather_rows(token_type_ids, indices), torch::kInt64);
    b.labels = as(gather_rows(labels, indices), torch::kInt64);
    b.size = indices.size(0);
    const auto* idx = indices.data_ptr<std::int64_t>();
    b.samples.assign(idx, idx + b.size);
    std::int64_t items = 0;
    for (std::int64_t i = 0; i < b.size; ++i) items += items_per_sample[static_cast<std::size_t>(idx[i])];
    b.num_items = items;
    return b;
}

Batch TensorDataset::gather(const std::vector<std::int64_t>& indices) const {
    auto t = torch::from_blob(const_cast<std::int64_t*>(indices.data()), {static_cast<std::int64_t>(indices.size())},
                              torch::kInt64);
    return gather(t);
}

std::string default_fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

namespace {

// A missing directory or file says where Fashion-MNIST comes from (the
// data_directory_missing and data_file_missing messages, accum/engine_messages.h).
std::string find_idx(const std::string& dir, const std::string& stem) {
    for (const auto& name : {stem + ".gz", stem}) {
        const auto path = (std::filesystem::path(dir) / name).string();
        if (std::filesystem::exists(path)) return path;
    }
    throw DataError(make_message(message_code::data_file_missing,
                                 {{"path", (std::filesystem::path(dir) / (stem + ".gz")).string()}}));
}

TensorDataset image_split(const std::string& dir, const std::string& prefix) {
    const auto images = read_idx_file(find_idx(dir, prefix + "-images-idx3-ubyte"));
    const auto labels = read_idx_file(find_idx(dir, prefix + "-labels-idx1-ubyte"));
    const std::string where = (std::filesystem::path(dir) / prefix).string();
    if (images.dims.size() != 3)
        throw corrupt_data(where + "-images-idx3-ubyte",
                           "expected 3 dimensions (count, rows, cols), found " + std::to_string(images.dims.size()));
    if (labels.dims.size() != 1)
        throw corrupt_data(where + "-labels-idx1-ubyte",
                           "expected 1 dimension, found " + std::to_string(labels.dims.size()));
    if (images.dims[0] != labels.dims[0])
        throw corrupt_data(where, std::to_string(images.dims[0]) + " images but " + std::to_string(labels.dims[0]) +
                                      " labels");
    const std::int64_t n = images.dims[0], rows = images.dims[1], cols = images.dims[2];
    if (n == 0) throw corrupt_data(where, "no images");
    for (const auto l : labels.data)
        if (l > 9) throw corrupt_data(where + "-labels-idx1-ubyte", "label " + std::to_string(int(l)) + " is not 0..9");
    TensorDataset d;
    d.name = "fashion-mnist";
    d.task = Task::ImageClassification;
    auto raw = torch::from_blob(const_cast<std::uint8_t*>(images.data.data()), {n, 1, rows, cols}, torch::kUInt8);
    // ToTensor() then Normalize((0.2860,), (0.3530,)): the data set's mean and std.
    d.inputs = raw.to(torch::kFloat32).div_(255.0).sub_(0.2860).div_(0.3530).contiguous();
    d.labels = torch::from_blob(const_cast<std::uint8_t*>(labels.data.data()), {n}, torch::kUInt8).to(torch::kInt64);
    d.items_per_sample.assign(static_cast<std::size_t>(n), 1);
    d.num_classes = 10;
    d.num_features = rows * cols;
    return d;
}

} // namespace

DataSplits load_fashion_mnist(const std::string& directory) {
    const std::string dir = directory.empty() ? default_fashion_mnist_dir() : directory;
    if (!std::filesystem::is_directory(dir))
        throw DataError(make_message(message_code::data_directory_missing, {{"path", dir}}));
    return DataSplits{image_split(dir, "train"), image_split(dir, "t10k"), {}};
}

// ------------------------------------------------------------ synthetic pairs
// MRPC-like: [CLS] sentence A [SEP] sentence B [SEP]. Positive pairs (label 1):
// B is a reordering of A with some words swapped for their "synonym" (word + half
// the vocabulary) and a few words dropped; negative pairs: B comes from another
// random sentence that shares a couple of words with A.
DataSplits make_synthetic_pairs(std::uint64_t seed, std::int64_t train_size, std::int64_t eval_size) {
    constexpr std::int64_t kPad = 0, kCls = 1, kSep = 2, kFirstWord = 3, kVocab = 512;
    constexpr std::int64_t kWords = (kVocab - kFirstWord) / 2; // base words; synonyms are + kWords
    constexpr std::int64_t kMaxLen = 48;
    auto make = [&](std::uint64_t split_seed, std::int64_t count) {
        std::mt19937_64 rng(split_seed);
        auto uniform = [&rng](std::int64_t lo, std::int64_t hi) {
            return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
        };
        std::vector<std::int64_t> ids(static_cast<std::size_t>(count * kMaxLen), kPad);
        std::vector<std::int64_t> mask(static_cast<std::size_t>(count * kMaxLen), 0);
        std::vector<std::int64_t> labels(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
            const std::int64_t len_a = uniform(6, 18);
            std::vector<std::int64_t> a;
            for (std::int64_t t = 0; t < len_a; ++t) a.push_back(kFirstWord + uniform(0, kWords - 1));
            const bool positive = uniform(0, 1) == 1;
            std::vector<std::int64_t> b;
            if (positive) {
                for (auto w : a) {
                    if (uniform(0, 9) == 0) continue; // drop a word
                    b.push_back(uniform(0, 2) == 0 ? w + kWords : w);
                }
                for (std::size_t k = 0; k + 1 < b.size(); k += 3)
                    if (uniform(0, 1)) std::swap(b[k], b[k + 1]);
            } else {
                const std::int64_t len_b = uniform(6, 18);
                for (std::int64_t t = 0; t < len_b; ++t) b.push_back(kFirstWord + uniform(0, kWords - 1));
                for (int k = 0; k < 2 && !b.empty(); ++k)
                    b[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(b.size()) - 1))] =
                        a[static_cast<std::size_t>(uniform(0, len_a - 1))];
            }
            std::vector<std::int64_t> seq{kCls};
            seq.insert(seq.end(), a.begin(), a.end());
            seq.push_back(kSep);
            seq.insert(seq.end(), b.begin(), b.end());
            seq.push_back(kSep);
            seq.resize(std::min<std::size_t>(seq.size(), kMaxLen));
            for (std::size_t t = 0; t < seq.size(); ++t) {
                ids[static_cast<std::size_t>(i * kMaxLen) + t] = seq[t];
                mask[static_cast<std::size_t>(i * kMaxLen) + t] = 1;
            }
            labels[static_cast<std::size_t>(i)] = positive ? 1 : 0;
        }
        TensorDataset d;
        d.name = "synthetic-pairs";
        d.task = Task::SequenceClassification;
        d.inputs = torch::tensor(ids).view({count, kMaxLen});
        d.attention_mask = torch::tensor(mask).view({count, kMaxLen});
        d.labels = torch::tensor(labels);
        d.items_per_sample.assign(static_cast<std::size_t>(count), 1);
        d.num_classes = 2;
        d.vocab_size = kVocab;
        d.max_length = kMaxLen;
        return d;
    };
    return DataSplits{make(seed * 2 + 1, train_size), make(seed * 2 + 2, eval_size), {}};
}

// ------------------------------------------------------------ synthetic LM
// Sequences from a sparse first-order Markov chain (each token has 3 likely
// successors), lengths 8..64, so the number of predicted tokens varies a lot
// between samples and token-normalised loss matters.
DataSplits make_synthetic_lm(std::uint64_t seed, std::int64_t train_size, std::int64_t eval_size) {
    constexpr std::int64_t kVocab = 64, kMaxLen = 64, kPad = 0;
    std::mt19937_64 chain_rng(seed ^ 0x5eedULL);
    std::vector<std::array<std::int64_t, 3>> successors(kVocab);
    for (auto& s : successors)
        for (auto& t : s) t = std::uniform_int_distribution<std::int64_t>(1, kVocab - 1)(chain_rng);
    auto make = [&](std::uint64_t split_seed, std::int64_t count) {
        std::mt19937_64 rng(split_seed);
        std::vector<std::int64_t> ids(static_cast<std::size_t>(count * kMaxLen), kPad);
        std::vector<std::int64_t> mask(static_cast<std::size_t>(count * kMaxLen), 0);
        std::vector<std::int64_t> labels(static_cast<std::size_t>(count * kMaxLen), kIgnoreIndex);
        std::vector<std::int64_t> items(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
            // Length skewed: many short, some long sequences.
            const std::int64_t len = 8 + static_cast<std::int64_t>(
                std::pow(std::uniform_real_distribution<double>(0, 1)(rng), 2.0) * (kMaxLen - 8));
            std::vector<std::int64_t> seq{std::uniform_int_distribution<std::int64_t>(1, kVocab - 1)(rng)};
            while (static_cast<std::int64_t>(seq.size()) < len + 1) {
                const auto r = std::uniform_int_distribution<int>(0, 9)(rng);
                const auto& s = successors[static_cast<std::size_t>(seq.back())];
                seq.push_back(r < 6 ? s[0] : r < 8 ? s[1] : r < 9 ? s[2]
                              : std::uniform_int_distribution<std::int64_t>(1, kVocab - 1)(rng));
            }
            for (std::int64_t t = 0; t < len; ++t) {
                const auto at = static_cast<std::size_t>(i * kMaxLen + t);
                ids[at] = seq[static_cast<std::size_t>(t)];
                mask[at] = 1;
                labels[at] = seq[static_cast<std::size_t>(t + 1)];
            }
            items[static_cast<std::size_t>(i)] = len;
        }
        TensorDataset d;
        d.name = "synthetic-lm";
        d.task = Task::LanguageModeling;
        d.inputs = torch::tensor(ids).view({count, kMaxLen});
        d.attention_mask = torch::tensor(mask).view({count, kMaxLen});
        d.labels = torch::tensor(labels).view({count, kMaxLen});
        d.items_per_sample = std::move(items);
        d.num_classes = kVocab;
        d.vocab_size = kVocab;
        d.max_length = kMaxLen;
        return d;
    };
    return DataSplits{make(seed * 2 + 101, train_size), make(seed * 2 + 102, eval_size), {}};
}

// ------------------------------------------------------------ csv
// The file is split 80/20 into train and eval by a seeded permutation; features
// are standardised with the train split's mean and standard deviation.
DataSplits load_csv_dataset(const std::string& path, const std::string& label_column, std::uint64_t seed) {
    const CsvTable table = read_csv_file(path, label_column);
    const std::int64_t rows = table.rows, cols = static_cast<std::int64_t>(table.feature_names.size());
    if (rows < 2) throw corrupt_data(path, "needs at least 2 data rows to make a train and an eval split");
    std::vector<std::int64_t> order(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) order[static_cast<std::size_t>(i)] = i;
    std::mt19937_64 rng(seed + 7);
    std::shuffle(order.begin(), order.end(), rng);
    const std::int64_t n_eval = std::max<std::int64_t>(1, rows / 5);
    auto all = torch::from_blob(const_cast<float*>(table.features.data()), {rows, cols}, torch::kFloat32).clone();
    auto labels = torch::tensor(table.labels);
    auto order_t = torch::tensor(order);
    auto eval_idx = order_t.slice(0, 0, n_eval), train_idx = order_t.slice(0, n_eval);
    auto train_x = all.index_select(0, train_idx);
    const auto mean = train_x.mean(0, true);
    const auto std = train_x.std(0, true, true).clamp_min(1e-6);
    auto make = [&](const torch::Tensor& idx) {
        TensorDataset d;
        d.name = "csv";
        d.task = Task::TabularClassification;
        d.inputs = ((all.index_select(0, idx) - mean) / std).contiguous();
        d.labels = labels.index_select(0, idx);
        d.items_per_sample.assign(static_cast<std::size_t>(idx.size(0)), 1);
        d.num_classes = std::max<std::int64_t>(2, static_cast<std::int64_t>(table.class_names.size()));
        d.num_features = cols;
        return d;
    };
    return DataSplits{make(train_idx), make(eval_idx), {}};
}

DataSplits load_dataset(const RunConfig& config) {
    switch (config.dataset) {
    case DatasetKind::FashionMnist: return load_fashion_mnist(config.data_path);
    case DatasetKind::SyntheticPairs: return make_synthetic_pairs(config.seed);
    case DatasetKind::SyntheticLm: return make_synthetic_lm(config.seed);
    case DatasetKind::Csv: return load_csv_dataset(config.data_path, config.label_column, config.seed);
    case DatasetKind::Tensors: return load_tensor_file(config.data_path);
    }
    throw ConfigError("--dataset: unknown dataset");
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
