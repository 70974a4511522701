#include "data/tensor_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include <torch/serialize.h>

#include "accum/errors.h"
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

// The file's tensors by split: flat ("input_ids", "eval_input_ids", …; eval_ taken
// off) or nested ({"train": {…}, "eval": {…}}).
void read_splits(const std::string& path, const c10::IValue& value, Named& train, Named& eval) {
    for (const auto& entry : dict_of(path, value, "")) {
        if (!entry.key().isString()) throw corrupt_data(path, "a key of the dict is not a string");
        const std::string key = entry.key().toStringRef();
        if ((key == "train" || key == "eval") && entry.value().isGenericDict()) {
            for (const auto& inner : dict_of(path, entry.value(), key)) {
                const std::string name = inner.key().isString() ? inner.key().toStringRef() : "?";
                (key == "train" ? train : eval)[name] = tensor_of(path, inner.value(), key + "." + name);
            }
        } else if (key.rfind("eval_", 0) == 0) {
            eval[key.substr(5)] = tensor_of(path, entry.value(), key);
        } else {
            train[key] = tensor_of(path, entry.value(), key);
        }
    }
}

// prefix: "" or "eval_", how the file names this split's keys (for the messages).
TensorDataset make_split(const std::string& path, const Named& t, const std::string& prefix, const char* split_name) {
    auto name = [&](const std::string& key) { return "'" + prefix + key + "'"; };
    auto bad = [&](const std::string& problem) { return corrupt_data(path, problem); };
    for (const auto& [key, tensor] : t)
        if (key != "input_ids" && key != "inputs" && key != "attention_mask" && key != "labels")
            throw bad("unknown key " + name(key) + " (a split holds input_ids or inputs, labels, and optionally "
                      "attention_mask; the eval split the same keys with eval_ before them)");
    if (t.count("input_ids") && t.count("inputs"))
        throw bad("holds both " + name("input_ids") + " and " + name("inputs") + "; keep one");
    const std::string input_key = t.count("input_ids") ? "input_ids" : "inputs";
    if (!t.count(input_key)) throw bad(std::string("the ") + split_name + " split has no " + name("input_ids") +
                                       " (or " + name("inputs") + ")");
    if (!t.count("labels")) throw bad(std::string("the ") + split_name + " split has no " + name("labels"));
    auto inputs = t.at(input_key).detach().to(torch::kCPU);
    auto labels = t.at("labels").detach().to(torch::kCPU);
    if (inputs.dim() < 2)
        throw bad(name(input_key) + " has shape " + shape_text(inputs) +
                  "; it needs a first dimension of samples and at least one more ([N, T] tokens, [N, F] features, "
                  "[N, C, H, W] images)");
    const std::int64_t n = inputs.size(0);
    if (n == 0) throw bad(name(input_key) + " holds no samples");
    if (!is_integer(labels) || labels.scalar_type() == torch::kBool)
        throw bad(name("labels") + " is " + dtype_text(labels) +
                  "; labels are class or token ids (an integer dtype such as int64)");
    if (labels.dim() < 1 || labels.dim() > 2 || labels.size(0) != n)
        throw bad(name("labels") + " has shape " + shape_text(labels) + " but " + name(input_key) + " has " +
                  shape_text(inputs) + "; labels are [N] (one class per sample) or [N, T] (a token id per position, "
                  "-100 where none counts) with the same N");
    labels = labels.to(torch::kInt64).contiguous();
    const auto low = labels.min().item<std::int64_t>();
    if (low < 0 && low != kIgnoreIndex)
        throw bad(name("labels") + " holds " + std::to_string(low) + "; labels are 0 or more, or -100 to be ignored");
    if (labels.dim() == 1 && low < 0) throw bad(name("labels") + " of a classification split holds -100");

    TensorDataset d;
    d.name = std::filesystem::path(path).filename().string();
    if (is_integer(inputs)) {
        if (inputs.scalar_type() == torch::kBool)
            throw bad(name(input_key) + " is bool; token ids are an integer dtype, features a float one");
        if (inputs.dim() != 2)
            throw bad(name(input_key) + " holds token ids of shape " + shape_text(inputs) + "; token ids are [N, T]");
        inputs = inputs.to(torch::kInt64).contiguous();
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
            d.attention_mask = mask.to(torch::kInt64).contiguous();
        }
    } else {
        if (labels.dim() != 1)
            throw bad(name("labels") + " has shape " + shape_text(labels) + " with float " + name(input_key) +
                      "; per-position labels need token ids as inputs");
        if (t.count("attention_mask"))
            throw bad(name("attention_mask") + " is given with float " + name(input_key) +
                      "; a mask belongs to token ids");
        if (inputs.scalar_type() != torch::kFloat32 && inputs.scalar_type() != torch::kFloat64)
            throw bad(name(input_key) + " is " + dtype_text(inputs) +
                      "; features and images are float32 (the engine trains in float32)");
        inputs = inputs.to(torch::kFloat32).contiguous();
        if (!torch::isfinite(inputs).all().item<bool>())
            throw bad(name(input_key) + " holds NaN or infinite values");
        d.task = inputs.dim() == 4 ? Task::ImageClassification : Task::TabularClassification;
        d.num_features = inputs.numel() / n;
    }
    if (d.task == Task::LanguageModeling && labels.size(1) != inputs.size(1))
        throw bad(name("labels") + " has shape " + shape_text(labels) + " but " + name(input_key) + " has " +
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

DataSplits load_tensor_file(const std::string& path) {
    if (path.empty()) throw DataError("--data: the tensors dataset needs --data FILE.pt (tensors saved by torch.save)");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw DataError("--data: " + path + ": no such file (the tensors to train on)");
    if (std::filesystem::is_directory(path, ec))
        throw DataError("--data: " + path + " is a directory; the tensors dataset is one .pt file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(make_message(message_code::data_cannot_open, {{"path", path}, {"reason", "not readable"}}));
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    c10::IValue value;
    try {
        value = torch::pickle_load(bytes);
    } catch (const std::exception& e) {
        std::string why = e.what();
        why = why.substr(0, why.find('\n'));
        // LibTorch's unpickler knows SETITEMS but not SETITEM, which Python's pickle
        // writes for a dict of one entry.
        if (why.find("Unknown opcode for unpickling at 0x73") != std::string::npos)
            throw corrupt_data(path, "holds a dict of one entry, which LibTorch's reader cannot read; the file "
                                     "needs input_ids (or inputs) and labels");
        throw corrupt_data(path, "cannot be read as tensors saved by torch.save (" + why + ")");
    }
    Named train, eval;
    read_splits(path, value, train, eval);
    DataSplits splits;
    splits.train = make_split(path, train, "", "training");
    if (!eval.empty()) {
        splits.eval = make_split(path, eval, "eval_", "eval");
        const auto& a = splits.train;
        const auto& b = splits.eval;
        const bool tokens = a.task == Task::LanguageModeling || a.task == Task::SequenceClassification;
        if (a.task != b.task || (!tokens && a.inputs.sizes().slice(1) != b.inputs.sizes().slice(1)))
            throw corrupt_data(path, "the eval split (" + shape_text(b.inputs) + " " + dtype_text(b.inputs) +
                                         ") does not match the training split (" + shape_text(a.inputs) + " " +
                                         dtype_text(a.inputs) + ")");
        if (a.attention_mask.defined() != b.attention_mask.defined())
            throw corrupt_data(path, "one split has an attention_mask and the other has none");
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

void count_label_items(TensorDataset& data, std::int64_t from) {
    data.items_per_sample.assign(static_cast<std::size_t>(data.size()), 1);
    if (!data.labels.defined() || data.labels.dim() != 2) return;
    const auto counts = data.labels.slice(1, from).ne(kIgnoreIndex).sum(1).contiguous();
    const auto* c = counts.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < data.size(); ++i) data.items_per_sample[static_cast<std::size_t>(i)] = c[i];
}

} // namespace accum
