#include "models/script_model.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <optional>
#include <unordered_set>

#include <caffe2/serialize/inline_container.h>
#include <torch/nn/functional/loss.h>
#include <torch/script.h>

#include "accum/errors.h"
#include "data/tensor_text.h"
#include "memory/out_of_memory.h"
#include "torch_compat.h"

namespace accum {

namespace {

// What feeds each argument of forward.
enum class Feed { Inputs, Mask, TokenTypes, Labels, Omitted };

const std::set<std::string>& input_names() {
    static const std::set<std::string> n{"input_ids", "inputs", "input", "x", "pixel_values", "images", "features"};
    return n;
}
const std::set<std::string>& mask_names() {
    static const std::set<std::string> n{"attention_mask", "mask"};
    return n;
}
const std::set<std::string>& label_names() {
    static const std::set<std::string> n{"labels", "label", "targets", "target", "y"};
    return n;
}

std::string joined(const std::set<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

// The line of a torch error that says what went wrong: the first, or the last
// where TorchScript's interpreter puts its traceback first.
std::string first_line(const std::exception& e) {
    const std::string what = error_text(e);
    if (what.find("Traceback of TorchScript") == std::string::npos) {
        // The first paragraph that says something: a TorchScript error may
        // open with an empty line ("\nUnknown builtin op: …").
        const auto begin = what.find_first_not_of("\n ");
        if (begin == std::string::npos) return "(LibTorch gave no reason)";
        const auto end = what.find("\n\n", begin);
        std::string text = what.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
        std::replace(text.begin(), text.end(), '\n', ' ');
        return text;
    }
    const auto end = what.find_last_not_of("\n ");
    const auto newline = what.rfind('\n', end);
    const auto begin = newline == std::string::npos ? 0 : newline + 1;
    return what.substr(begin, end + 1 - begin);
}

// The operator a module needs and this LibTorch lacks ("aten::scaled_dot_product_attention"), if that is why it failed.
std::string missing_operator(const std::string& reason) {
    const std::string marker = "Unknown builtin op: ";
    const auto at = reason.find(marker);
    if (at == std::string::npos) return {};
    const auto begin = at + marker.size();
    auto end = reason.find_first_of(" \n", begin);
    std::string op = reason.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    while (!op.empty() && (op.back() == '.' || op.back() == ',')) op.pop_back();
    return op;
}

// The names of the extra files torch.jit.save(..., _extra_files=...) put in the
// archive at `path` (hf/config.json, hf/model.json, …), with empty contents for
// torch::jit::load to fill: the trained module is saved with them again, so that
// what reads them (a checkpoint's exporter) finds them in every saved module.
torch::jit::ExtraFilesMap extra_file_names(const std::string& path) {
    torch::jit::ExtraFilesMap names;
    caffe2::serialize::PyTorchStreamReader reader(path);
    const std::string prefix = "extra/";
    for (const auto& record : reader.getAllRecords())
        if (record.rfind(prefix, 0) == 0) names.emplace(record.substr(prefix.size()), std::string());
    return names;
}

ConfigError refuse_module(const std::string& path, const std::string& problem) {
    return ConfigError(make_message(message_code::invalid_configuration,
                                    {{"option", "model"}, {"problem", path + ": " + problem}}));
}

// What forward returned, taken apart.
struct Returned {
    torch::Tensor loss;
    torch::Tensor logits;
};

// How the probe describes what forward returned: "logits", "a loss",
// "a tuple (loss, logits, …)", "a dict {loss, logits}".
std::string form_of(const c10::IValue& value) {
    if (value.isTensor()) return value.toTensor().dim() == 0 ? "a loss" : "logits";
    if (value.isTuple() || value.isList()) {
        const auto items = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        std::string form = "a tuple (";
        for (std::size_t i = 0; i < items.size() && i < 4; ++i) {
            const bool tensor = items[i].isTensor();
            form += (i ? ", " : "") + std::string(!tensor                                   ? items[i].tagKind()
                                                  : items[i].toTensor().dim() == 0 && i == 0 ? "loss"
                                                  : i <= 1                                  ? "logits"
                                                                                            : "tensor");
        }
        return form + (items.size() > 4 ? ", …)" : ")");
    }
    if (value.isGenericDict()) {
        std::string form = "a dict {";
        bool first = true;
        for (const auto& entry : value.toGenericDict()) {
            form += (first ? "" : ", ") + (entry.key().isString() ? entry.key().toStringRef() : std::string("?"));
            first = false;
        }
        return form + "}";
    }
    return value.tagKind();
}

// The loss (a 0-dimensional tensor first, or "loss") and the logits (the first
// other tensor of the first two, or "logits") of what forward returned.
Returned take_apart(const c10::IValue& value) {
    Returned r;
    auto take = [&r](const c10::IValue& v, bool may_be_loss) {
        if (!v.isTensor()) return;
        const auto& t = v.toTensor();
        if (t.dim() == 0 && may_be_loss && !r.loss.defined()) r.loss = t;
        else if (t.dim() > 0 && !r.logits.defined()) r.logits = t;
    };
    if (value.isTensor()) {
        take(value, true);
    } else if (value.isTuple() || value.isList()) {
        const auto items = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
        for (std::size_t i = 0; i < items.size() && i < 2; ++i) take(items[i], i == 0);
    } else if (value.isGenericDict()) {
        for (const auto& entry : value.toGenericDict()) {
            if (!entry.key().isString() || !entry.value().isTensor()) continue;
            if (entry.key().toStringRef() == "loss") r.loss = entry.value().toTensor();
            if (entry.key().toStringRef() == "logits") r.logits = entry.value().toTensor();
        }
    }
    return r;
}

class ScriptModel final : public Model {
public:
    ScriptModel(torch::jit::Module module, std::string path, std::string data_path, KernelSet kernels,
                torch::jit::ExtraFilesMap extra_files)
        : Model(kernels), module_(std::move(module)), forward_(module_.get_method("forward")),
          path_(std::move(path)), data_path_(std::move(data_path)), extra_files_(std::move(extra_files)) {
        if (module_.find_method("forward_eval")) eval_forward_ = module_.get_method("forward_eval");
        std::unordered_set<const c10::TensorImpl*> seen;
        mirror(module_, *this, seen);
    }

    // Which data feeds which argument; throws ConfigError when one cannot be fed.
    void bind(const TensorDataset& data) {
        const auto& schema = forward_.function().getSchema();
        bool inputs = false;
        std::vector<std::string> unfed;
        for (std::size_t i = 1; i < schema.arguments().size(); ++i) { // 0 is self
            const auto& arg = schema.arguments()[i];
            std::string name = arg.name();
            Feed feed = Feed::Omitted;
            if (input_names().count(name)) feed = Feed::Inputs;
            else if (mask_names().count(name)) feed = Feed::Mask;
            else if (name == "token_type_ids") feed = Feed::TokenTypes;
            else if (label_names().count(name)) feed = Feed::Labels;
            else if (schema.arguments().size() == 2) feed = Feed::Inputs; // forward(self, anything): the inputs
            if (feed == Feed::Inputs && inputs) feed = Feed::Omitted;     // one argument takes them
            if (feed == Feed::Omitted && !arg.default_value()) unfed.push_back(name);
            defaults_.push_back(arg.default_value() ? std::optional<c10::IValue>(*arg.default_value()) : std::nullopt);
            if (feed == Feed::Inputs) inputs = true;
            if (feed == Feed::Labels) takes_labels_ = true;
            if (feed == Feed::Mask && !data.attention_mask.defined()) mask_made_ = true;
            if (feed == Feed::TokenTypes) {
                takes_token_types_ = true;
                // A default (None in Transformers) is better than made-up zeros.
                if (!data.token_type_ids.defined() && arg.default_value()) feed = Feed::Omitted;
                else if (!data.token_type_ids.defined()) token_types_made_ = true;
            }
            arguments_.emplace_back(std::move(name), feed);
        }
        token_types_unfed_ = data.token_type_ids.defined() && !takes_token_types_;
        const std::string signature = signature_text();
        if (eval_forward_) {
            // forward_eval is fed as forward is: the same arguments in the same order.
            const auto& eval_args = eval_forward_->function().getSchema().arguments();
            bool same = eval_args.size() == schema.arguments().size();
            std::string names;
            for (std::size_t i = 1; i < eval_args.size(); ++i) {
                names += (i > 1 ? ", " : "") + eval_args[i].name();
                same = same && eval_args[i].name() == schema.arguments()[i].name();
            }
            if (!same)
                throw refuse("forward_eval(" + names + ") takes other arguments than forward" + signature +
                             "; the engine evaluates with forward_eval and feeds it as it feeds forward");
        }
        if (!inputs)
            throw refuse("forward" + signature + " takes none of the names the batch's inputs go to (" +
                         joined(input_names()) + ")");
        if (!unfed.empty())
            throw refuse("forward" + signature + " needs '" + unfed.front() +
                         "', which the data has nothing for (the engine passes inputs as one of " +
                         joined(input_names()) + ", the mask as " + joined(mask_names()) + " and labels as " +
                         joined(label_names()) + ")");
    }

    // One forward over the first two training samples, without gradients: what
    // comes back, and whether its loss is the cross-entropy of its logits.
    void probe(const TensorDataset& data, const RunConfig& config) {
        std::vector<std::int64_t> idx;
        for (std::int64_t i = 0; i < std::min<std::int64_t>(2, data.size()); ++i) idx.push_back(i);
        const Batch batch = data.gather(idx);
        c10::IValue value;
        {
            // forward_eval where there is one: the probe draws no dropout masks, so
            // the training's random numbers start where the seed put them.
            torch::NoGradGuard no_grad;
            value = call_or_refuse(batch, /*evaluation=*/true);
        }
        form_ = form_of(value);
        const Returned out = take_apart(value);
        if (!out.loss.defined() && !out.logits.defined())
            throw refuse("forward returns " + form_ +
                         "; the engine trains a module that returns logits, a loss (a 0-dimensional tensor), "
                         "a tuple (loss, logits) or a dict with \"loss\" and \"logits\"");
        if (out.loss.defined() && !takes_labels_)
            throw refuse("forward returns a loss but takes no labels (name the argument labels, targets or y)");
        if (out.loss.defined() && !out.loss.is_floating_point())
            throw refuse("forward returns a loss of dtype " + dtype_text(out.loss));
        std::optional<std::int64_t> shift; // where the module's loss is a cross-entropy over its logits
        if (!out.loss.defined()) shift = 0;
        if (out.logits.defined()) {
            logits_shape_ = shape_text(out.logits);
            label_width_ = out.logits.size(-1);
            const bool rows = batch.labels.dim() == 1 && out.logits.dim() == 2 && out.logits.size(0) == batch.size;
            const bool tokens = batch.labels.dim() == 2 && out.logits.dim() == 3 &&
                                out.logits.size(0) == batch.size && out.logits.size(1) == batch.labels.size(1);
            if (!rows && !tokens)
                throw refuse("forward returns logits of shape " + logits_shape_ + ", which do not fit labels of shape " +
                             shape_text(batch.labels) +
                             " (class logits [B, C] for labels [B], token logits [B, T, V] for labels [B, T])");
            if (!out.loss.defined()) {
                // Labels beyond the logits are the data's problem: build_run_parts
                // checks every one against label_width() and names the sample.
                loss_kind_ = "the engine's cross-entropy over the logits";
            } else {
                for (std::int64_t s : {0, 1}) {
                    if (s == 1 && !tokens) break;
                    const auto logits = out.logits.slice(1, 0, out.logits.size(1) - s).to(torch::kFloat32);
                    const auto labels = batch.labels.slice(-1, s);
                    if (labels.ne(kIgnoreIndex).sum().item<std::int64_t>() == 0) continue;
                    if (labels.max().item<std::int64_t>() >= logits.size(-1)) continue;
                    const auto ce = torch::nn::functional::cross_entropy(
                        logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}),
                        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex));
                    const double a = ce.item<double>(), b = out.loss.item<double>();
                    if (std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(b))) {
                        shift = s;
                        break;
                    }
                }
                loss_kind_ = shift == 0   ? "its own loss, the cross-entropy over its logits"
                             : shift == 1 ? "its own loss, the cross-entropy of each position's logits against the "
                                            "next label (a causal LM's shift)"
                                          : "its own loss, not a cross-entropy over its logits";
            }
        } else {
            loss_kind_ = "its own loss";
        }
        if (!shift && config.loss_normalization == LossNormalization::Tokens)
            throw ConfigError(make_message(
                message_code::invalid_configuration,
                {{"option", "loss-normalization"},
                 {"problem", "tokens cannot apply to " + path_ + ": its forward returns " + form_ +
                                 " and its loss is not a cross-entropy over logits the engine can match with the "
                                 "labels, so the engine cannot count the tokens it averaged over; use "
                                 "--loss-normalization mean"}}));
        shift_ = shift.value_or(0);
    }

    ModelOutput forward(const Batch& batch) override {
        const c10::IValue value = call_on_data(batch);
        Returned out = take_apart(value);
        if (!out.loss.defined() && !out.logits.defined())
            throw std::runtime_error(path_ + ": forward returned " + form_of(value) + " this time, without a loss or logits");
        if (!out.loss.defined()) return loss_from_logits(std::move(out.logits), batch);
        ModelOutput o;
        o.loss = out.loss.to(torch::kFloat32);
        o.loss_sum = o.loss * static_cast<double>(std::max<std::int64_t>(1, batch.num_items));
        o.backward_start = o.loss;
        if (out.logits.defined() && shift_ > 0) {
            o.logits = out.logits.slice(1, 0, out.logits.size(1) - shift_);
            o.labels = batch.labels.slice(1, shift_);
        } else {
            o.logits = std::move(out.logits);
        }
        return o;
    }

    torch::Tensor logits(const Batch& batch) override { return take_apart(call_on_data(batch)).logits; }

    std::int64_t label_shift() const override { return shift_; }

    std::string describe() const override {
        std::ostringstream out;
        out << "TorchScript module " << path_ << " (" << module_.type()->name()->name() << ", "
            << parameter_count() << " parameters" << trainable_text() << "): forward" << signature_text() << " returns " << form_;
        if (!logits_shape_.empty()) out << " (logits " << logits_shape_ << " for two samples)";
        out << "; trains on " << loss_kind_;
        if (eval_forward_) out << "; evaluates with forward_eval (the model in eval mode: no dropout)";
        if (mask_made_) out << "; attention_mask is all ones (the data has none)";
        if (token_types_made_) out << "; token_type_ids are all zeros (the data has none)";
        return out.str();
    }

    std::int64_t label_width() const override { return label_width_; }

    std::vector<std::string> feeding_notes() const override {
        if (!token_types_unfed_) return {};
        return {"the data's token_type_ids are not fed: forward" + signature_text() + " takes no token_type_ids"};
    }

    void train(bool on = true) override {
        torch::nn::Module::train(on);
        module_.train(on);
    }

    void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false) override {
        torch::nn::Module::to(device, dtype, non_blocking);
        module_.to(device, dtype, non_blocking);
    }
    void to(torch::Dtype dtype, bool non_blocking = false) override {
        torch::nn::Module::to(dtype, non_blocking);
        module_.to(dtype, non_blocking);
    }
    void to(torch::Device device, bool non_blocking = false) override {
        torch::nn::Module::to(device, non_blocking);
        module_.to(device, non_blocking);
    }

    void save_module(std::ostream& out) const { module_.save(out, extra_files_); }

private:
    // The module's parameters and buffers as this Model's, submodule by submodule,
    // so that named_parameters() gives the names Python's state_dict() does. A
    // tensor met before (tied weights, e.g. GPT-2's lm_head and wte) is registered once.
    static void mirror(const torch::jit::Module& from, torch::nn::Module& to,
                       std::unordered_set<const c10::TensorImpl*>& seen) {
        for (const auto& p : from.named_parameters(/*recurse=*/false))
            if (seen.insert(p.value.unsafeGetTensorImpl()).second)
                to.register_parameter(p.name, p.value, p.value.requires_grad());
        for (const auto& b : from.named_buffers(/*recurse=*/false))
            if (seen.insert(b.value.unsafeGetTensorImpl()).second) to.register_buffer(b.name, b.value);
        for (const auto& child : from.named_children()) {
            auto holder = std::make_shared<torch::nn::Module>();
            mirror(child.value, *holder, seen);
            to.register_module(child.name, holder);
        }
    }

    ConfigError refuse(const std::string& problem) const { return refuse_module(path_, problem); }

    // ", N trainable (the rest frozen)" where some parameters require no gradient (a LoRA module's base).
    std::string trainable_text() const {
        std::int64_t trainable = 0;
        for (const auto& p : trainable_parameters()) trainable += p.numel();
        if (trainable == parameter_count()) return {};
        return ", " + std::to_string(trainable) + " trainable (the rest frozen: requires_grad false)";
    }

    std::string signature_text() const {
        std::string out = "(";
        for (std::size_t i = 0; i < arguments_.size(); ++i) {
            const auto& [name, feed] = arguments_[i];
            if (out.size() > 1) out += ", ";
            out += name;
            switch (feed) {
            case Feed::Inputs: out += " ← inputs"; break;
            case Feed::Mask: out += " ← attention_mask"; break;
            case Feed::TokenTypes: out += " ← token_type_ids"; break;
            case Feed::Labels: out += " ← labels"; break;
            case Feed::Omitted: out += defaults_[i] ? " (default)" : " (nothing fits)"; break;
            }
        }
        return out + ")";
    }

    // forward(batch): its arguments in schema order (the default where nothing
    // feeds one), so a micro-batch's call matches no names. A module with
    // forward_eval (the model traced in eval mode, beside forward traced in
    // train mode) evaluates with it: model.eval() in Python.
    c10::IValue call(const Batch& batch, bool evaluation = false) {
        std::vector<c10::IValue> stack;
        stack.reserve(arguments_.size());
        for (std::size_t i = 0; i < arguments_.size(); ++i) {
            switch (arguments_[i].second) {
            case Feed::Inputs: stack.emplace_back(batch.input_ids); break;
            case Feed::Mask:
                stack.emplace_back(batch.attention_mask.defined() ? batch.attention_mask
                                                                  : torch::ones_like(batch.input_ids));
                break;
            case Feed::TokenTypes:
                stack.emplace_back(batch.token_type_ids.defined() ? batch.token_type_ids
                                                                  : torch::zeros_like(batch.input_ids));
                break;
            case Feed::Labels: stack.emplace_back(batch.labels); break;
            case Feed::Omitted: stack.push_back(*defaults_[i]); break;
            }
        }
        if (eval_forward_ && (evaluation || !is_training())) return (*eval_forward_)(std::move(stack));
        return forward_(std::move(stack));
    }

    // A run's call. An error the module raises on the data ends the run with the
    // code of its kind and LibTorch's reason whole: an index out of range (a
    // label or token id the module has no row for) is the data's, anything else
    // the module's. Out of memory, and the engine's own errors, pass unchanged.
    c10::IValue call_on_data(const Batch& batch) {
        try {
            return call(batch);
        } catch (const CodedError&) {
            throw;
        } catch (const std::exception& e) {
            if (is_out_of_memory_error(e)) throw;
            fail_on(batch, e);
        }
    }

    // Throws the failure on `batch`, naming it and, where one sample fails alone, that sample.
    [[noreturn]] void fail_on(const Batch& batch, const std::exception& e) {
        const std::string full = error_text(e);
        const std::string reason = first_line(e);
        const bool data = dynamic_cast<const c10::IndexError*>(&e) != nullptr ||
                          reason.find("out of bounds") != std::string::npos ||
                          reason.find("index out of range") != std::string::npos ||
                          reason.find("IndexError") != std::string::npos;
        std::string where = std::string(is_training() ? "training" : "eval") + " batch";
        if (batch.index >= 0) where += " " + std::to_string(batch.index + 1) + " of the epoch";
        where += " (" + samples_text(batch.samples) + ")";
        if (const auto culprit = failing_sample(batch); culprit >= 0)
            where += "; sample " + std::to_string(culprit) + " fails alone";
        const std::string text = "failed on " + where + ": " + reason;
        // The interpreter's traceback says where in the module's code: the run's log keeps it.
        if (data) {
            DataError error(data_path_ + ": the forward of " + path_ + " " + text);
            if (full != reason) error.set_log_text("LibTorch's whole message: " + trimmed(full));
            throw error;
        }
        auto error = refuse("forward " + text);
        if (full != reason) error.set_log_text("LibTorch's whole message: " + trimmed(full));
        throw error;
    }

    // The first sample of `batch` on which forward fails alone (no gradients), or -1.
    std::int64_t failing_sample(const Batch& batch) {
        if (batch.size <= 1 || batch.samples.size() != static_cast<std::size_t>(batch.size)) return -1;
        torch::NoGradGuard no_grad;
        for (std::int64_t i = 0; i < batch.size; ++i) {
            Batch one;
            auto row = [i](const torch::Tensor& t) { return t.defined() ? t.slice(0, i, i + 1) : t; };
            one.input_ids = row(batch.input_ids);
            one.attention_mask = row(batch.attention_mask);
            one.token_type_ids = row(batch.token_type_ids);
            one.labels = row(batch.labels);
            one.size = 1;
            one.num_items = 1;
            try {
                call(one);
            } catch (const std::exception&) {
                return batch.samples[static_cast<std::size_t>(i)];
            }
        }
        return -1;
    }

    static std::string samples_text(const std::vector<std::int64_t>& samples) {
        if (samples.empty()) return "no samples";
        bool run = true;
        for (std::size_t i = 1; i < samples.size(); ++i) run = run && samples[i] == samples[i - 1] + 1;
        if (samples.size() == 1) return "sample " + std::to_string(samples.front());
        if (run) return "samples " + std::to_string(samples.front()) + "–" + std::to_string(samples.back());
        std::string out = "samples ";
        for (std::size_t i = 0; i < samples.size() && i < 4; ++i) out += (i ? ", " : "") + std::to_string(samples[i]);
        return out + (samples.size() > 4 ? ", … (" + std::to_string(samples.size()) + ")" : "");
    }

    static std::string trimmed(const std::string& text) {
        const auto begin = text.find_first_not_of("\n ");
        const auto end = text.find_last_not_of("\n ");
        return begin == std::string::npos ? std::string() : text.substr(begin, end + 1 - begin);
    }

    // The probe's call: an error is the module's refusal, with the shapes it was given.
    c10::IValue call_or_refuse(const Batch& batch, bool evaluation) {
        try {
            return call(batch, evaluation);
        } catch (const std::exception& e) {
            std::string shapes = "inputs " + shape_text(batch.input_ids) + " " + dtype_text(batch.input_ids);
            if (batch.attention_mask.defined()) shapes += ", attention_mask " + shape_text(batch.attention_mask);
            shapes += ", labels " + shape_text(batch.labels);
            throw refuse("forward" + signature_text() + " failed on two samples of the data (" + shapes +
                         "): " + first_line(e));
        }
    }

    torch::jit::Module module_;
    torch::jit::Method forward_;
    std::optional<torch::jit::Method> eval_forward_;
    std::string path_;
    std::string data_path_; // the data's file, for a failure that is the data's
    torch::jit::ExtraFilesMap extra_files_; // the file's extra files, saved again with the trained module
    std::vector<std::pair<std::string, Feed>> arguments_;
    std::vector<std::optional<c10::IValue>> defaults_; // by argument: its default value, if any
    bool takes_labels_ = false;
    bool mask_made_ = false;
    bool takes_token_types_ = false;
    bool token_types_made_ = false;  // forward takes token_type_ids, the data has none: zeros
    bool token_types_unfed_ = false; // the data has token_type_ids, forward takes none
    std::int64_t label_width_ = 0;
    std::string form_;
    std::string logits_shape_;
    std::string loss_kind_;
    std::int64_t shift_ = 0;
};

} // namespace

std::shared_ptr<Model> load_script_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    const std::string& path = config.model_file;
    auto refuse = [&path](const std::string& problem) { return refuse_module(path, problem); };
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw DataError("--model: " + path + ": no such file (the TorchScript module to train)");
    if (std::filesystem::is_directory(path, ec))
        throw refuse("is a directory; --model takes the .pt file torch.jit.save wrote");
    torch::jit::Module module;
    torch::jit::ExtraFilesMap extra_files;
    try {
        extra_files = extra_file_names(path);
        module = torch::jit::load(path, torch::kCPU, extra_files);
    } catch (const std::exception& e) {
        const std::string reason = first_line(e);
        if (const auto op = missing_operator(reason); !op.empty())
            throw refuse("needs the operator " + op + ", which LibTorch " + compat::kTorchVersion +
                         " (this build) does not have: run it with the LibTorch 2.x build (scripts/build-libtorch2.sh), "
                         "or trace the model with operators this build has (Transformers: "
                         "from_pretrained(..., attn_implementation=\"eager\")). LibTorch: " + reason);
        throw refuse("cannot be read as a TorchScript module (save one with torch.jit.save(torch.jit.script(model), "
                     "path) or torch.jit.trace): " + reason);
    }
    if (!module.find_method("forward")) throw refuse("the module has no forward method");
    auto model = std::make_shared<ScriptModel>(std::move(module), path,
                                               config.data_path.empty() ? to_string(config.dataset) : config.data_path,
                                               kernels, std::move(extra_files));
    bool trainable = false;
    for (const auto& p : model->parameters()) trainable = trainable || p.requires_grad();
    if (!trainable)
        throw refuse("has no parameters that require gradients, so there is nothing to train (a module saved after "
                     "requires_grad_(False), or one with no parameters)");
    model->bind(data);
    model->probe(data, config);
    return model;
}

bool is_script_model(const Model& model) { return dynamic_cast<const ScriptModel*>(&model) != nullptr; }

bool save_torchscript(Model& model, std::ostream& out) {
    const auto* script = dynamic_cast<const ScriptModel*>(&model);
    if (script == nullptr) return false;
    script->save_module(out);
    return true;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
