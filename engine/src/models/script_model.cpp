#include "models/script_model.h"

#include <filesystem>
#include <set>
#include <sstream>
#include <unordered_set>

#include <torch/nn/functional/loss.h>
#include <torch/script.h>

#include "accum/errors.h"

namespace accum {

namespace {

// What feeds each argument of forward.
enum class Feed { Inputs, Mask, Labels, Omitted };

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

std::string shape_text(const torch::Tensor& t) {
    std::ostringstream out;
    out << '[';
    for (std::int64_t d = 0; d < t.dim(); ++d) out << (d ? ", " : "") << t.size(d);
    out << ']';
    return out.str();
}

// A torch error's first line: the rest is a C++ or TorchScript stack.
std::string first_line(const std::exception& e) {
    std::string what = e.what();
    // TorchScript's interpreter puts "The following operation failed…" and the
    // traceback first; its last line is the error itself.
    const auto traceback = what.find("Traceback of TorchScript");
    if (traceback != std::string::npos) {
        auto end = what.find_last_not_of("\n ");
        auto begin = what.rfind('\n', end);
        return what.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
    }
    return what.substr(0, what.find('\n'));
}

// What forward returned, taken apart.
struct Returned {
    torch::Tensor loss;
    torch::Tensor logits;
    std::string form; // "logits", "a loss", "(loss, logits, …)", "{loss, logits, …}"
};

class ScriptModel final : public Model {
public:
    ScriptModel(torch::jit::Module module, std::string path, KernelSet kernels)
        : Model(kernels), module_(std::move(module)), path_(std::move(path)) {
        std::unordered_set<const c10::TensorImpl*> seen;
        mirror(module_, *this, seen);
    }

    // Which data feeds which argument; throws ConfigError when one cannot be fed.
    void bind(const TensorDataset& data) {
        const auto& schema = module_.get_method("forward").function().getSchema();
        bool inputs = false;
        std::vector<std::string> unfed;
        for (std::size_t i = 1; i < schema.arguments().size(); ++i) { // 0 is self
            const auto& arg = schema.arguments()[i];
            std::string name = arg.name();
            Feed feed = Feed::Omitted;
            if (input_names().count(name)) feed = Feed::Inputs;
            else if (mask_names().count(name)) feed = Feed::Mask;
            else if (label_names().count(name)) feed = Feed::Labels;
            else if (schema.arguments().size() == 2) feed = Feed::Inputs; // forward(self, anything): the inputs
            if (feed == Feed::Inputs && inputs) feed = Feed::Omitted;     // one argument takes them
            if (feed == Feed::Omitted && !arg.default_value()) unfed.push_back(name);
            if (arg.default_value()) defaults_.insert(name);
            if (feed == Feed::Inputs) inputs = true;
            if (feed == Feed::Labels) takes_labels_ = true;
            if (feed == Feed::Mask && !data.attention_mask.defined()) mask_made_ = true;
            arguments_.emplace_back(std::move(name), feed);
        }
        const std::string signature = signature_text();
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
        Returned out;
        {
            torch::NoGradGuard no_grad;
            out = call(batch, /*probing=*/true);
        }
        form_ = out.form;
        if (out.logits.defined()) {
            logits_shape_ = shape_text(out.logits);
            const bool rows = batch.labels.dim() == 1 && out.logits.dim() == 2 && out.logits.size(0) == batch.size;
            const bool tokens = batch.labels.dim() == 2 && out.logits.dim() == 3 &&
                                out.logits.size(0) == batch.size && out.logits.size(1) == batch.labels.size(1);
            if (!rows && !tokens)
                throw refuse("forward returns logits of shape " + logits_shape_ + ", which do not fit labels of shape " +
                             shape_text(batch.labels) +
                             " (class logits [B, C] for labels [B], token logits [B, T, V] for labels [B, T])");
            if (!out.loss.defined()) {
                if (out.logits.size(-1) < data.num_classes)
                    throw refuse("forward returns " + std::to_string(out.logits.size(-1)) +
                                 " logits per item but the data's labels go up to " +
                                 std::to_string(data.num_classes - 1));
                loss_kind_ = "the engine's cross-entropy over the logits";
            } else {
                shift_ = -1;
                for (std::int64_t shift : {0, 1}) {
                    if (shift == 1 && !tokens) break;
                    const auto logits = out.logits.slice(1, 0, out.logits.size(1) - shift).to(torch::kFloat32);
                    const auto labels = batch.labels.slice(-1, shift);
                    if (labels.ne(kIgnoreIndex).sum().item<std::int64_t>() == 0) continue;
                    if (labels.max().item<std::int64_t>() >= logits.size(-1)) continue;
                    const auto ce = torch::nn::functional::cross_entropy(
                        logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}),
                        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex));
                    const double a = ce.item<double>(), b = out.loss.item<double>();
                    if (std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(b))) {
                        shift_ = shift;
                        break;
                    }
                }
                loss_kind_ = shift_ == 0   ? "its own loss, the cross-entropy over its logits"
                             : shift_ == 1 ? "its own loss, the cross-entropy of each position's logits against the "
                                             "next label (a causal LM's shift)"
                                           : "its own loss, not a cross-entropy over its logits";
            }
        } else {
            loss_kind_ = "its own loss";
        }
        const bool own_loss = out.loss.defined();
        if (own_loss && shift_ < 0 && config.loss_normalization == LossNormalization::Tokens)
            throw ConfigError(make_message(
                message_code::invalid_configuration,
                {{"option", "loss-normalization"},
                 {"problem", "tokens cannot apply to " + path_ + ": its forward returns " + form_ +
                                 " and its loss is not a cross-entropy over logits the engine can match with the "
                                 "labels, so the engine cannot count the tokens it averaged over; use "
                                 "--loss-normalization mean"}}));
        if (shift_ < 0) shift_ = 0;
    }

    ModelOutput forward(const Batch& batch) override {
        Returned out = call(batch, false);
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

    torch::Tensor logits(const Batch& batch) override { return call(batch, false).logits; }

    std::int64_t label_shift() const override { return shift_; }

    std::string describe() const override {
        std::ostringstream out;
        out << "TorchScript module " << path_ << " (" << module_.type()->name()->name() << ", "
            << parameter_count() << " parameters): forward" << signature_text() << " returns " << form_;
        if (!logits_shape_.empty()) out << " (logits " << logits_shape_ << " for two samples)";
        out << "; trains on " << loss_kind_;
        if (mask_made_) out << "; attention_mask is all ones (the data has none)";
        return out.str();
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

    std::string torchscript_bytes() override {
        std::ostringstream out;
        module_.save(out);
        return out.str();
    }

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

    ConfigError refuse(const std::string& problem) const {
        return ConfigError(make_message(message_code::invalid_configuration,
                                        {{"option", "model"}, {"problem", path_ + ": " + problem}}));
    }

    std::string signature_text() const {
        std::string out = "(";
        for (const auto& [name, feed] : arguments_) {
            if (out.size() > 1) out += ", ";
            out += name;
            switch (feed) {
            case Feed::Inputs: out += " ← inputs"; break;
            case Feed::Mask: out += " ← attention_mask"; break;
            case Feed::Labels: out += " ← labels"; break;
            case Feed::Omitted: out += defaults_.count(name) ? " (default)" : " (nothing fits)"; break;
            }
        }
        return out + ")";
    }

    Returned call(const Batch& batch, bool probing) {
        std::unordered_map<std::string, c10::IValue> kwargs;
        for (const auto& [name, feed] : arguments_) {
            switch (feed) {
            case Feed::Inputs: kwargs.emplace(name, batch.input_ids); break;
            case Feed::Mask:
                kwargs.emplace(name, batch.attention_mask.defined() ? batch.attention_mask
                                                                     : torch::ones_like(batch.input_ids));
                break;
            case Feed::Labels: kwargs.emplace(name, batch.labels); break;
            case Feed::Omitted: break;
            }
        }
        c10::IValue value;
        try {
            value = module_.get_method("forward")({}, kwargs);
        } catch (const std::exception& e) {
            if (!probing) throw;
            std::string shapes = "inputs " + shape_text(batch.input_ids) + " " +
                                 std::string(c10::toString(batch.input_ids.scalar_type()));
            if (batch.attention_mask.defined()) shapes += ", attention_mask " + shape_text(batch.attention_mask);
            shapes += ", labels " + shape_text(batch.labels);
            throw refuse("forward" + signature_text() + " failed on two samples of the data (" + shapes +
                         "): " + first_line(e));
        }
        return read(value, probing);
    }

    Returned read(const c10::IValue& value, bool probing) const {
        Returned r;
        auto take = [&](const torch::Tensor& t, bool allow_loss) {
            if (t.dim() == 0 && allow_loss && !r.loss.defined()) r.loss = t;
            else if (t.dim() > 0 && !r.logits.defined()) r.logits = t;
        };
        if (value.isTensor()) {
            const auto& t = value.toTensor();
            take(t, true);
            r.form = t.dim() == 0 ? "a loss" : "logits";
        } else if (value.isTuple() || value.isList()) {
            const auto items = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
            r.form = "a tuple (";
            for (std::size_t i = 0; i < items.size(); ++i) {
                const bool tensor = items[i].isTensor();
                std::string what = !tensor                                   ? items[i].tagKind()
                                   : items[i].toTensor().dim() == 0 && i == 0 ? "loss"
                                   : i <= 1                                  ? "logits"
                                                                             : "tensor";
                if (i < 2 && tensor) take(items[i].toTensor(), i == 0);
                r.form += (i ? ", " : "") + what;
                if (i == 3 && items.size() > 4) {
                    r.form += ", …";
                    break;
                }
            }
            r.form += ")";
        } else if (value.isGenericDict()) {
            r.form = "a dict {";
            bool first = true;
            for (const auto& entry : value.toGenericDict()) {
                const std::string key = entry.key().isString() ? entry.key().toStringRef() : "?";
                if (entry.value().isTensor()) {
                    if (key == "loss") r.loss = entry.value().toTensor();
                    if (key == "logits") r.logits = entry.value().toTensor();
                }
                r.form += (first ? "" : ", ") + key;
                first = false;
            }
            r.form += "}";
        } else {
            r.form = value.tagKind();
        }
        if (probing) {
            if (!r.loss.defined() && !r.logits.defined())
                throw refuse("forward returns " + r.form +
                             "; the engine trains a module that returns logits, a loss (a 0-dimensional tensor), "
                             "a tuple (loss, logits) or a dict with \"loss\" and \"logits\"");
            if (r.loss.defined() && !takes_labels_)
                throw refuse("forward returns a loss but takes no labels (name the argument labels, targets or y)");
            if (r.loss.defined() && !r.loss.is_floating_point())
                throw refuse("forward returns a loss of dtype " + std::string(c10::toString(r.loss.scalar_type())));
        } else if (!r.loss.defined() && !r.logits.defined()) {
            throw std::runtime_error(path_ + ": forward returned " + r.form + " this time, without a loss or logits");
        }
        return r;
    }

    torch::jit::Module module_;
    std::string path_;
    std::vector<std::pair<std::string, Feed>> arguments_;
    std::set<std::string> defaults_; // arguments with a default value
    bool takes_labels_ = false;
    bool mask_made_ = false;
    std::string form_;
    std::string logits_shape_;
    std::string loss_kind_;
    std::int64_t shift_ = 0;
};

} // namespace

std::shared_ptr<Model> load_script_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    const std::string& path = config.model_file;
    auto refuse = [&](const std::string& problem) {
        return ConfigError(make_message(message_code::invalid_configuration,
                                        {{"option", "model"}, {"problem", path + ": " + problem}}));
    };
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw DataError("--model: " + path + ": no such file (the TorchScript module to train)");
    if (std::filesystem::is_directory(path, ec))
        throw refuse("is a directory; --model takes the .pt file torch.jit.save wrote");
    torch::jit::Module module;
    try {
        module = torch::jit::load(path, torch::kCPU);
    } catch (const std::exception& e) {
        throw refuse("cannot be read as a TorchScript module (save one with torch.jit.save(torch.jit.script(model), "
                     "path) or torch.jit.trace): " + first_line(e));
    }
    if (!module.find_method("forward")) throw refuse("the module has no forward method");
    auto model = std::make_shared<ScriptModel>(std::move(module), path, kernels);
    bool trainable = false;
    for (const auto& p : model->parameters()) trainable = trainable || p.requires_grad();
    if (!trainable)
        throw refuse("has no parameters that require gradients, so there is nothing to train (a module saved after "
                     "requires_grad_(False), or one with no parameters)");
    model->bind(data);
    model->probe(data, config);
    return model;
}

} // namespace accum
