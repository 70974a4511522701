#include "data/tensor_file.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <vector>

#include <torch/serialize.h>

#include "accum/errors.h"
#include "data/safetensors_reader.h"
#include "data/tensor_text.h"

namespace accum {

namespace {

bool is_integer(const torch::Tensor& t) { return !t.is_floating_point() && !t.is_complex(); }

using Named = std::map<std::string, torch::Tensor>;

// One dict of named tensors ('train' or 'eval' when nested, "" for the file's own).
const c10::impl::GenericDict dict_of(const std::string& path, const c10::IValue& value, const std::string& where) {
    if (!value.isGenericDict())
        throw corrupt_data(path, (where.empty() ? "holds " : "'" + where + "' is ") + value.tagKind() +
                                     ", not a dict of named tensors (torch.save({\"input_ids\": …, \"labels\": …}, path))");
    return value.toGenericDict();
}

const torch::Tensor& tensor_of(const std::string& path, const c10::IValue& value, const std::string& key) {
    if (!value.isTensor()) throw corrupt_data(path, "'" + key + "' is " + value.tagKind() + ", not a tensor");
    return value.toTensor();
}

// A split's tensors and how the file names their keys ("" and "eval_" for a
// flat file, "validation." for a nested one), for the messages.
struct RawSplit {
    Named tensors;
    std::string prefix;
};

bool is_split_name(const std::string& key) {
    return key == "train" || key == "eval" || key == "validation" || key == "test";
}

constexpr const char* kSplitNames =
    "the splits are train, validation (or eval) and test, as Hugging Face datasets name them";

// The file's tensors by split, whatever the file's format: split "" for a name
// at the file's top level ("input_ids", "eval_input_ids", …; eval_ taken off),
// else the split that holds it ("train", "validation", "test", "eval"), as
// Hugging Face datasets name them.
struct NamedTensor {
    std::string split;
    std::string key;
    torch::Tensor tensor;
};

std::map<std::string, RawSplit> group_splits(std::vector<NamedTensor> named) {
    std::map<std::string, RawSplit> splits;
    for (auto& n : named) {
        if (!n.split.empty()) {
            auto& split = splits[n.split];
            split.prefix = n.split + ".";
            if (n.tensor.defined()) split.tensors[n.key] = std::move(n.tensor);
        } else if (n.key.rfind("eval_", 0) == 0) {
            splits["eval"].prefix = "eval_";
            splits["eval"].tensors[n.key.substr(5)] = std::move(n.tensor);
        } else {
            splits["train"].tensors[n.key] = std::move(n.tensor);
        }
    }
    return splits;
}

// A torch.save file's tensors: flat ({"input_ids": …, "eval_input_ids": …}) or
// nested ({"train": {…}, "validation": {…}, "test": {…}}; "eval" too).
std::vector<NamedTensor> read_pickled(const std::string& path, const c10::IValue& value) {
    std::vector<NamedTensor> named;
    for (const auto& entry : dict_of(path, value, "")) {
        if (!entry.key().isString()) throw corrupt_data(path, "a key of the dict is not a string");
        const std::string key = entry.key().toStringRef();
        if (entry.value().isGenericDict()) {
            if (!is_split_name(key))
                throw corrupt_data(path, "'" + key + "' is a dict, and no split this reader knows: " + kSplitNames);
            named.push_back({key, "", {}}); // the split, even when its dict is empty
            for (const auto& inner : dict_of(path, entry.value(), key)) {
                const std::string name = inner.key().isString() ? inner.key().toStringRef() : "?";
                named.push_back({key, name, tensor_of(path, inner.value(), key + "." + name)});
            }
        } else {
            named.push_back({"", key, tensor_of(path, entry.value(), key)});
        }
    }
    return named;
}

// The object a torch.save file holds.
c10::IValue read_pickle(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(make_message(message_code::data_cannot_open, {{"path", path}, {"reason", "not readable"}}));
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
        return torch::pickle_load(bytes);
    } catch (const std::exception& e) {
        std::string why = error_text(e);
        why = why.substr(0, why.find('\n'));
        // LibTorch's unpickler knows SETITEMS but not SETITEM, which Python's pickle
        // writes for a dict of one entry.
        if (why.find("Unknown opcode for unpickling at 0x73") != std::string::npos)
            throw corrupt_data(path, "holds a dict of one entry, which LibTorch's reader cannot read; the file "
                                     "needs input_ids (or inputs) and labels");
        throw corrupt_data(path, "cannot be read as tensors saved by torch.save (" + why + ")");
    }
}

// A safetensors file's tensors, each a view of the file's read-only mapping that
// keeps the mapping alive: nothing of the file is copied. Nested splits are
// flattened with a dot ("train.input_ids", "validation.labels"); flat names
// follow the torch.save file's rules.
std::vector<NamedTensor> read_safetensors(const std::string& path) {
    auto mapping = std::make_shared<const MappedFile>(path);
    const auto entries = parse_safetensors(mapping->data(), mapping->size(), path);
    std::vector<NamedTensor> named;
    for (const auto& e : entries) {
        NamedTensor n;
        n.key = e.name;
        if (const auto dot = e.name.find('.'); dot != std::string::npos) {
            n.split = e.name.substr(0, dot);
            n.key = e.name.substr(dot + 1);
            if (!is_split_name(n.split))
                throw corrupt_data(path, "tensor '" + e.name + "': '" + n.split + "' is no split this reader knows: " +
                                             kSplitNames + " (train.input_ids, validation.labels, …)");
        }
        // from_blob never writes: the pointer is const only to the mapping's type.
        auto* at = const_cast<std::uint8_t*>(mapping->data() + e.begin);
        n.tensor = torch::from_blob(at, e.shape, [mapping](void*) {},
                                    torch::TensorOptions().dtype(safetensors_scalar_type(e.dtype)));
        named.push_back(std::move(n));
    }
    return named;
}

// prefix: how the file names this split's keys ("", "eval_", "validation."), for the messages.
TensorDataset make_split(const std::string& path, const Named& t, const std::string& prefix, const char* split_name) {
    auto name = [&](const std::string& key) { return "'" + prefix + key + "'"; };
    auto bad = [&](const std::string& problem) { return corrupt_data(path, problem); };
    for (const auto& [key, tensor] : t)
        if (key != "input_ids" && key != "inputs" && key != "attention_mask" && key != "token_type_ids" &&
            key != "labels" && key != "label")
            throw bad("unknown key " + name(key) + " (a split holds input_ids or inputs, labels or label, and "
                      "optionally attention_mask and token_type_ids, as a tokenizer gives them; the eval split the "
                      "same keys with eval_ before them, or nested as {\"train\": {…}, \"validation\": {…}})");
    if (t.count("input_ids") && t.count("inputs"))
        throw bad("holds both " + name("input_ids") + " and " + name("inputs") + "; keep one");
    if (t.count("labels") && t.count("label"))
        throw bad("holds both " + name("labels") + " and " + name("label") + "; keep one");
    const std::string input_key = t.count("input_ids") ? "input_ids" : "inputs";
    const std::string label_key = t.count("label") ? "label" : "labels";
    if (!t.count(input_key)) throw bad(std::string("the ") + split_name + " split has no " + name("input_ids") +
                                       " (or " + name("inputs") + ")");
    if (!t.count(label_key))
        throw bad(std::string("the ") + split_name + " split has no " + name("labels") + " (or " + name("label") + ")");
    auto inputs = t.at(input_key).detach().to(torch::kCPU);
    auto labels = t.at(label_key).detach().to(torch::kCPU);
    if (inputs.dim() < 2)
        throw bad(name(input_key) + " has shape " + shape_text(inputs) +
                  "; it needs a first dimension of samples and at least one more ([N, T] tokens, [N, F] features, "
                  "[N, C, H, W] images)");
    const std::int64_t n = inputs.size(0);
    if (n == 0) throw bad(name(input_key) + " holds no samples");
    if (!is_integer(labels) || labels.scalar_type() == torch::kBool)
        throw bad(name(label_key) + " is " + dtype_text(labels) +
                  "; labels are class or token ids (an integer dtype such as int64)");
    if (labels.dim() < 1 || labels.dim() > 2 || labels.size(0) != n)
        throw bad(name(label_key) + " has shape " + shape_text(labels) + " but " + name(input_key) + " has " +
                  shape_text(inputs) + "; labels are [N] (one class per sample) or [N, T] (a token id per position, "
                  "-100 where none counts) with the same N");
    // The tensors keep the file's dtype: a batch is converted as it is gathered
    // (TensorDataset::gather), so a mapped file is never copied whole.
    labels = labels.contiguous();
    const auto low = labels.min().item<std::int64_t>();
    if (low < 0 && low != kIgnoreIndex)
        throw bad(name(label_key) + " holds " + std::to_string(low) + "; labels are 0 or more, or -100 to be ignored");
    if (labels.dim() == 1 && low < 0) throw bad(name(label_key) + " of a classification split holds -100");

    TensorDataset d;
    d.name = std::filesystem::path(path).filename().string();
    if (is_integer(inputs)) {
        if (inputs.scalar_type() == torch::kBool)
            throw bad(name(input_key) + " is bool; token ids are an integer dtype, features a float one");
        if (inputs.dim() != 2)
            throw bad(name(input_key) + " holds token ids of shape " + shape_text(inputs) + "; token ids are [N, T]");
        inputs = inputs.contiguous();
        if (inputs.min().item<std::int64_t>() < 0)
            throw bad(name(input_key) + " holds a negative token id (" +
                      std::to_string(inputs.min().item<std::int64_t>()) + ")");
        d.task = labels.dim() == 2 ? Task::LanguageModeling : Task::SequenceClassification;
        d.vocab_size = inputs.max().item<std::int64_t>() + 1;
        d.max_length = inputs.size(1);
        if (t.count("attention_mask")) {
            auto mask = t.at("attention_mask").detach().to(torch::kCPU);
            if (mask.sizes() != inputs.sizes())
                throw bad(name("attention_mask") + " has shape " + shape_text(mask) + " but " + name(input_key) +
                          " has " + shape_text(inputs) + "; they must be the same");
            if (mask.is_floating_point())
                throw bad(name("attention_mask") + " is " + dtype_text(mask) + "; it holds 1 (attend) and 0 (padding)");
            d.attention_mask = mask.contiguous();
        }
        if (t.count("token_type_ids")) {
            auto types = t.at("token_type_ids").detach().to(torch::kCPU);
            if (types.sizes() != inputs.sizes())
                throw bad(name("token_type_ids") + " has shape " + shape_text(types) + " but " + name(input_key) +
                          " has " + shape_text(inputs) + "; they must be the same");
            if (!is_integer(types) || types.scalar_type() == torch::kBool)
                throw bad(name("token_type_ids") + " is " + dtype_text(types) +
                          "; it holds segment ids (0 for the first sentence, 1 for the second)");
            if (types.min().item<std::int64_t>() < 0)
                throw bad(name("token_type_ids") + " holds a negative segment id");
            d.token_type_ids = types.contiguous();
        }
    } else {
        if (labels.dim() != 1)
            throw bad(name(label_key) + " has shape " + shape_text(labels) + " with float " + name(input_key) +
                      "; per-position labels need token ids as inputs");
        for (const char* key : {"attention_mask", "token_type_ids"})
            if (t.count(key))
                throw bad(name(key) + " is given with float " + name(input_key) + "; it belongs to token ids");
        if (inputs.scalar_type() != torch::kFloat32 && inputs.scalar_type() != torch::kFloat64)
            throw bad(name(input_key) + " is " + dtype_text(inputs) +
                      "; features and images are float32 (the engine trains in float32)");
        inputs = inputs.contiguous();
        bool finite = true;
        for_row_chunks(inputs, [&](std::int64_t, const torch::Tensor& rows) {
            finite = finite && torch::isfinite(rows).all().item<bool>();
        });
        if (!finite) throw bad(name(input_key) + " holds NaN or infinite values");
        d.task = inputs.dim() == 4 ? Task::ImageClassification : Task::TabularClassification;
        d.num_features = inputs.numel() / n;
    }
    if (d.task == Task::LanguageModeling && labels.size(1) != inputs.size(1))
        throw bad(name(label_key) + " has shape " + shape_text(labels) + " but " + name(input_key) + " has " +
                  shape_text(inputs) + "; a language model's labels are one per position");
    d.inputs = inputs;
    d.labels = labels;
    const auto high = labels.max().item<std::int64_t>();
    d.num_classes = std::max<std::int64_t>(2, high + 1);
    if (d.task == Task::LanguageModeling) d.num_classes = std::max(d.num_classes, d.vocab_size);
    count_label_items(d);
    return d;
}

} // namespace

torch::ScalarType safetensors_scalar_type(const std::string& dtype) {
    if (dtype == "BOOL") return torch::kBool;
    if (dtype == "U8") return torch::kUInt8;
    if (dtype == "I8") return torch::kInt8;
    if (dtype == "I16") return torch::kInt16;
    if (dtype == "I32") return torch::kInt32;
    if (dtype == "I64") return torch::kInt64;
    if (dtype == "F16") return torch::kFloat16;
    if (dtype == "BF16") return torch::kBFloat16;
    if (dtype == "F32") return torch::kFloat32;
    return torch::kFloat64; // "F64": parse_safetensors lets no other dtype through
}

DataSplits load_tensor_file(const std::string& path) {
    if (path.empty()) throw DataError("--data: the tensors dataset needs --data FILE.pt (tensors saved by torch.save)");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw DataError("--data: " + path + ": no such file (the tensors to train on)");
    if (std::filesystem::is_directory(path, ec))
        throw DataError("--data: " + path + " is a directory; the tensors dataset is one .pt or .safetensors file");
    auto raw = group_splits(is_safetensors_file(path) ? read_safetensors(path) : read_pickled(path, read_pickle(path)));
    DataSplits splits;
    if (raw.count("eval") && raw.count("validation"))
        throw corrupt_data(path, "holds both an eval and a validation split; keep one (the run evaluates on it)");
    // The run evaluates on the validation split; a file with a test split only evaluates on that.
    std::string eval_split = raw.count("validation") ? "validation" : raw.count("eval") ? "eval" : "";
    if (raw.count("test")) {
        if (eval_split.empty()) {
            eval_split = "test";
            splits.notes.push_back(path + " has no validation split: the run evaluates on its test split");
        } else {
            splits.notes.push_back(path + ": its test split is kept aside; the run evaluates on its " + eval_split +
                                   " split");
        }
    }
    splits.train = make_split(path, raw["train"].tensors, raw["train"].prefix, "training");
    if (!eval_split.empty()) {
        const auto& e = raw[eval_split];
        splits.eval = make_split(path, e.tensors, e.prefix, eval_split.c_str());
        const auto& a = splits.train;
        const auto& b = splits.eval;
        const bool tokens = a.task == Task::LanguageModeling || a.task == Task::SequenceClassification;
        if (a.task != b.task || (!tokens && a.inputs.sizes().slice(1) != b.inputs.sizes().slice(1)))
            throw corrupt_data(path, "the " + eval_split + " split (" + shape_text(b.inputs) + " " +
                                         dtype_text(b.inputs) + ") does not match the training split (" +
                                         shape_text(a.inputs) + " " + dtype_text(a.inputs) + ")");
        if (a.attention_mask.defined() != b.attention_mask.defined())
            throw corrupt_data(path, "one split has an attention_mask and the other has none");
        if (a.token_type_ids.defined() != b.token_type_ids.defined())
            throw corrupt_data(path, "one split has token_type_ids and the other has none");
        // One class count and vocabulary for both: a class only the eval split holds still gets an output.
        const auto classes = std::max(a.num_classes, b.num_classes);
        const auto vocab = std::max(a.vocab_size, b.vocab_size);
        for (auto* d : {&splits.train, &splits.eval}) {
            d->num_classes = classes;
            d->vocab_size = vocab;
        }
    }
    splits.eval.name = splits.train.name;
    return splits;
}

void for_row_chunks(const torch::Tensor& t, const std::function<void(std::int64_t, const torch::Tensor&)>& fn) {
    if (!t.defined() || t.dim() == 0 || t.size(0) == 0) return;
    const std::int64_t row = std::max<std::int64_t>(1, t.numel() / t.size(0));
    const std::int64_t step = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / row);
    for (std::int64_t first = 0; first < t.size(0); first += step)
        fn(first, t.slice(0, first, std::min(first + step, t.size(0))));
}

void count_label_items(TensorDataset& data, std::int64_t from) {
    data.items_per_sample.assign(static_cast<std::size_t>(data.size()), 1);
    if (!data.labels.defined() || data.labels.dim() != 2) return;
    for_row_chunks(data.labels, [&](std::int64_t first, const torch::Tensor& rows) {
        const auto counts = rows.slice(1, from).to(torch::kInt64).ne(kIgnoreIndex).sum(1).contiguous();
        const auto* c = counts.data_ptr<std::int64_t>();
        for (std::int64_t i = 0; i < counts.size(0); ++i) data.items_per_sample[static_cast<std::size_t>(first + i)] = c[i];
    });
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
