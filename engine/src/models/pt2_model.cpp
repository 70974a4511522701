// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/pt2_model.h"

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "accum/errors.h"
#include "torch_compat.h"

#if ACCUM_PT2_PACKAGES
#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "data/safetensors_reader.h"
#include "data/tensor_file.h"
#include "data/tensor_text.h"
#include "memory/out_of_memory.h"
#endif

namespace accum {

bool is_pt2_package(const std::string& path) {
    return path.size() > 4 && path.compare(path.size() - 4, 4, ".pt2") == 0;
}

namespace {

ConfigError refuse_package(const std::string& path, const std::string& problem) {
    return ConfigError(make_message(message_code::invalid_configuration,
                                    {{"option", "model"}, {"problem", path + ": " + problem}}));
}

} // namespace

#if !ACCUM_PT2_PACKAGES

std::shared_ptr<Model> load_pt2_model(const RunConfig& config, const TensorDataset&, KernelSet) {
    throw refuse_package(config.model_file,
                         std::string("is an AOTInductor package (.pt2), which this build's LibTorch ") +
                             compat::kTorchVersion +
                             " cannot run (packages need LibTorch 2.6 or later): run it with the LibTorch 2.x build "
                             "(scripts/build-libtorch2.sh), or export the model as TorchScript "
                             "(examples/hf_to_accum.py without --format pt2)");
}

#else

namespace {

using nlohmann::json;

constexpr const char* kMetaRecord = "extra/accum.json";
constexpr const char* kWeightsRecord = "accum/weights.safetensors";
constexpr const char* kFormat = "accum-pt2-train/1";

// "2.15.0+cu132" → "2.15.0": the release, without the build's local tag.
std::string release_of(const std::string& version) { return version.substr(0, version.find('+')); }

// The package's "train" call hands its loss to autograd here; the gradients it
// computed come back in backward, scaled by what flows into the loss (1/K, a
// token count, the loss scaler's scale), for autograd to add into each .grad.
struct PackageStep : public torch::autograd::Function<PackageStep> {
    // params as a TensorList: autograd takes each as an input (a std::vector would be one opaque argument).
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList params,
                                 const c10::IValue& loss, const c10::IValue& grads) {
        ctx->saved_data["grads"] = grads;
        (void)params; // inputs only so that autograd routes their gradients here
        return loss.toTensor();
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad_outputs) {
        // The package's gradients are dropped here, not when the graph is: they
        // count as this micro-batch's activations only until its backward. They
        // are scaled in place (the call made them, nothing else holds them), so
        // the backward adds no second copy of every gradient to the call's peak;
        // one that shares its memory with another, or overlaps itself, is copied.
        auto grads = ctx->saved_data["grads"].toTensorVector();
        ctx->saved_data.erase("grads");
        torch::autograd::variable_list out;
        out.reserve(grads.size() + 2);
        const auto& scale = grad_outputs.at(0);
        std::multiset<const void*> storages;
        for (const auto& g : grads) storages.insert(g.storage().data());
        for (auto& g : grads) {
            const auto factor = scale.to(g.scalar_type());
            const bool own = g.is_non_overlapping_and_dense() && storages.count(g.storage().data()) == 1;
            out.push_back(own ? g.mul_(factor) : g * factor);
        }
        grads.clear();
        out.emplace_back(); // loss
        out.emplace_back(); // grads
        return out;
    }
};

class Pt2Model final : public Model {
public:
    Pt2Model(std::string path, json meta, KernelSet kernels)
        : Model(kernels), path_(std::move(path)), meta_(std::move(meta)) {}

    // Reads the graphs, registers the weights under their state_dict names.
    void load(const std::map<std::string, torch::Tensor>& weights) {
        for (const auto& p : meta_.at("parameters")) {
            const auto name = p.at("name").get<std::string>();
            const auto it = weights.find(name);
            if (it == weights.end()) throw refuse("its weights have no tensor for the parameter " + name);
            const bool trained = p.at("trained").get<bool>();
            auto t = place(name).register_parameter(leaf(name), it->second, trained);
            if (trained) trained_.push_back(t);
            params_.push_back(t);
        }
        for (const auto& b : meta_.at("buffers")) {
            const auto name = b.at("name").get<std::string>();
            const auto it = weights.find(name);
            if (it == weights.end()) throw refuse("its weights have no tensor for the buffer " + name);
            buffers_.push_back(place(name).register_buffer(leaf(name), it->second));
        }
        for (const auto& k : meta_.at("batch")) batch_keys_.push_back(k.get<std::string>());
        for (const auto& item : meta_.at("batch_dtypes").items()) batch_dtypes_[item.key()] = item.value().get<std::string>();
        if (!meta_.at("label_shift").is_null()) shift_ = meta_.at("label_shift").get<std::int64_t>();
        const auto& shape = meta_.at("logits_shape");
        if (!shape.empty()) label_width_ = shape.back().get<std::int64_t>();
        try {
            train_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(path_, "train");
            eval_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(path_, "eval");
        } catch (const std::exception& e) {
            throw refuse("its compiled graphs cannot be loaded (export it again with examples/accum_pt2.py on this "
                         "machine's torch " + std::string(compat::kTorchVersion) + "): " + first_line(e));
        }
    }

    bool has_label_shift() const { return !meta_.at("label_shift").is_null(); }
    // The step was compiled under autocast (bf16 or fp16 matrix products inside the call).
    bool compiled_autocast() const { return meta_.contains("autocast") && !meta_.at("autocast").is_null(); }

    // The data must have what the graph takes, in its shapes but the batch dimension.
    void bind(const TensorDataset& data) {
        const auto seq = meta_.value("sequence_length", std::int64_t{0});
        if (seq > 0 && data.inputs.dim() >= 2 && data.inputs.size(1) != seq)
            throw refuse("was compiled for sequences of " + std::to_string(seq) + " tokens and the data has " +
                         std::to_string(data.inputs.size(1)) +
                         ": only the batch dimension is dynamic; export it again with the data's length "
                         "(hf_to_accum.py --max-length " + std::to_string(data.inputs.size(1)) + ")");
        for (const auto& key : batch_keys_) {
            if (key == "token_type_ids" && !data.token_type_ids.defined()) token_types_made_ = true;
            if (key == "attention_mask" && !data.attention_mask.defined()) mask_made_ = true;
        }
    }

    ModelOutput forward(const Batch& batch) override {
        if (!is_training()) return evaluate(batch);
        auto inputs = graph_inputs(batch);
        // The dropout seed: a new one each micro-batch, from the generator --seed seeds.
        inputs.push_back(torch::randint(std::int64_t{1} << 31, at::IntArrayRef{}, torch::TensorOptions().dtype(torch::kInt64)));
        std::vector<torch::Tensor> out = run(*train_, std::move(inputs), batch);
        const std::size_t n = trained_.size();
        if (out.size() != 2 + n + buffers_.size())
            throw refuse("its train graph returned " + std::to_string(out.size()) + " tensors where accum.json lists " +
                         std::to_string(2 + n + buffers_.size()));
        {
            torch::NoGradGuard no_grad;
            for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].copy_(out[2 + n + i]);
        }
        std::vector<torch::Tensor> grads(out.begin() + 2, out.begin() + 2 + static_cast<std::ptrdiff_t>(n));
        torch::Tensor loss = PackageStep::apply(at::TensorList(trained_), c10::IValue(out[0]), c10::IValue(std::move(grads)));
        return output(loss.to(torch::kFloat32), out[1], batch);
    }

    torch::Tensor logits(const Batch& batch) override { return evaluate(batch).logits; }

    std::int64_t label_shift() const override { return shift_; }
    std::int64_t label_width() const override { return label_width_; }

    std::string describe() const override {
        std::ostringstream out;
        out << "AOTInductor package " << path_ << " (" << meta_.value("model_class", std::string("model")) << ", "
            << parameter_count() << " parameters, torch " << meta_.value("torch_version", std::string("?"))
            << "): one compiled call per micro-batch takes the parameters, buffers, batch (";
        for (std::size_t i = 0; i < batch_keys_.size(); ++i) out << (i ? ", " : "") << batch_keys_[i];
        out << ") and a dropout seed and returns the loss, the logits and " << trained_.size()
            << " gradients; evaluates with its eval graph (no dropout)";
        if (compiled_autocast()) out << "; compiled under " << meta_.at("autocast").get<std::string>() << " autocast";
        if (!meta_.value("dropout", false)) out << "; no dropout in its train graph";
        if (shift_ == 1) out << "; its loss is a causal LM's (each position against the next label)";
        if (mask_made_) out << "; attention_mask is all ones (the data has none)";
        if (token_types_made_) out << "; token_type_ids are all zeros (the data has none)";
        return out.str();
    }

private:
    ConfigError refuse(const std::string& problem) const { return refuse_package(path_, problem); }

    static std::string first_line(const std::exception& e) {
        std::string what = error_text(e);
        const auto end = what.find('\n');
        return end == std::string::npos ? what : what.substr(0, end);
    }

    static std::string leaf(const std::string& name) {
        const auto dot = name.rfind('.');
        return dot == std::string::npos ? name : name.substr(dot + 1);
    }

    // The submodule that holds `name` ("encoder.layer.0.weight" → encoder/layer/0),
    // made on first use, so that named_parameters() gives Python's names.
    torch::nn::Module& place(const std::string& name) {
        torch::nn::Module* at = this;
        std::size_t begin = 0;
        for (auto dot = name.find('.'); dot != std::string::npos; dot = name.find('.', begin)) {
            const auto part = name.substr(begin, dot - begin);
            auto children = at->named_children();
            if (const auto* child = children.find(part)) at = child->get();
            else at = at->register_module(part, std::make_shared<torch::nn::Module>()).get();
            begin = dot + 1;
        }
        return *at;
    }

    std::vector<torch::Tensor> graph_inputs(const Batch& batch) const {
        std::vector<torch::Tensor> inputs;
        inputs.reserve(params_.size() + buffers_.size() + batch_keys_.size() + 1);
        for (const auto& p : params_) inputs.push_back(p.detach());
        for (const auto& b : buffers_) inputs.push_back(b.detach());
        for (const auto& key : batch_keys_) {
            torch::Tensor t;
            if (key == "input_ids") t = batch.input_ids;
            else if (key == "labels") t = batch.labels;
            else if (key == "attention_mask")
                t = batch.attention_mask.defined() ? batch.attention_mask : torch::ones_like(batch.input_ids);
            else if (key == "token_type_ids")
                t = batch.token_type_ids.defined() ? batch.token_type_ids : torch::zeros_like(batch.input_ids);
            const auto dtype = batch_dtypes_.find(key);
            if (dtype != batch_dtypes_.end()) t = t.to(scalar_type(dtype->second));
            inputs.push_back(t.contiguous());
        }
        return inputs;
    }

    static torch::ScalarType scalar_type(const std::string& name) {
        static const std::map<std::string, std::string> st{{"float32", "F32"}, {"float64", "F64"}, {"float16", "F16"},
                                                           {"bfloat16", "BF16"}, {"int64", "I64"}, {"int32", "I32"},
                                                           {"int16", "I16"}, {"int8", "I8"}, {"uint8", "U8"},
                                                           {"bool", "BOOL"}};
        const auto it = st.find(name);
        return it == st.end() ? torch::kFloat32 : safetensors_scalar_type(it->second);
    }

    std::vector<torch::Tensor> run(torch::inductor::AOTIModelPackageLoader& graph, std::vector<torch::Tensor> inputs,
                                   const Batch& batch) {
        if (!params_.empty() && params_.front().device().type() != expected_device())
            throw refuse("was compiled for " + meta_.value("device", std::string("cpu")) + " and the run is on " +
                         params_.front().device().str() + ": export it on the run's device (examples/accum_pt2.py)");
        try {
            torch::NoGradGuard no_grad;
            return graph.run(inputs);
        } catch (const CodedError&) {
            throw;
        } catch (const std::exception& e) {
            if (is_out_of_memory_error(e)) throw;
            throw refuse("its compiled call failed on a batch of " + std::to_string(batch.size) + " (inputs " +
                         shape_text(batch.input_ids) + "): " + first_line(e));
        }
    }

    c10::DeviceType expected_device() const {
        return meta_.value("device", std::string("cpu")) == "cuda" ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
    }

    ModelOutput evaluate(const Batch& batch) {
        auto out = run(*eval_, graph_inputs(batch), batch);
        return output(out.at(0).to(torch::kFloat32), out.at(1), batch);
    }

    ModelOutput output(torch::Tensor loss, torch::Tensor logits, const Batch& batch) const {
        ModelOutput o;
        o.loss = std::move(loss);
        o.loss_sum = o.loss * static_cast<double>(std::max<std::int64_t>(1, batch.num_items));
        o.backward_start = o.loss;
        if (shift_ > 0) {
            o.logits = logits.slice(1, 0, logits.size(1) - shift_);
            o.labels = batch.labels.slice(1, shift_);
        } else {
            o.logits = std::move(logits);
        }
        return o;
    }

    std::string path_;
    json meta_;
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> train_;
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> eval_;
    std::vector<torch::Tensor> params_;  // every parameter, in the graphs' order
    std::vector<torch::Tensor> trained_; // those with gradients, in the train graph's order
    std::vector<torch::Tensor> buffers_;
    std::vector<std::string> batch_keys_;
    std::map<std::string, std::string> batch_dtypes_;
    std::int64_t shift_ = 0;
    std::int64_t label_width_ = 0;
    bool mask_made_ = false;
    bool token_types_made_ = false;
};

std::string record_text(caffe2::serialize::PyTorchStreamReader& reader, const char* name) {
    auto [data, size] = reader.getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
}

// The package's initial weights, copied out of its safetensors record.
std::map<std::string, torch::Tensor> read_weights(const std::string& bytes, const std::string& path) {
    const auto* base = reinterpret_cast<const std::uint8_t*>(bytes.data());
    std::map<std::string, torch::Tensor> out;
    for (const auto& e : parse_safetensors(base, bytes.size(), path + " (accum/weights.safetensors)")) {
        auto t = torch::empty(e.shape, torch::TensorOptions().dtype(safetensors_scalar_type(e.dtype)));
        if (e.end > e.begin) std::memcpy(t.data_ptr(), base + e.begin, e.end - e.begin);
        out.emplace(e.name, std::move(t));
    }
    return out;
}

} // namespace

std::shared_ptr<Model> load_pt2_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    const std::string& path = config.model_file;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw DataError("--model: " + path + ": no such file (the AOTInductor package to train)");
    json meta;
    std::string weights;
    try {
        caffe2::serialize::PyTorchStreamReader reader(path);
        if (!reader.hasRecord(kMetaRecord) || !reader.hasRecord(kWeightsRecord))
            throw refuse_package(path, "has no accum.json and weights: it is not a training package (an "
                                       "inference .pt2 from aoti_compile_and_package has no training step); write "
                                       "one with examples/accum_pt2.py or hf_to_accum.py --format pt2");
        meta = json::parse(record_text(reader, kMetaRecord));
        weights = record_text(reader, kWeightsRecord);
    } catch (const CodedError&) {
        throw;
    } catch (const std::exception& e) {
        throw refuse_package(path, "cannot be read as an AOTInductor package (a .pt2 zip archive): " + error_text(e));
    }
    if (meta.value("format", std::string()) != kFormat)
        throw refuse_package(path, "accum.json has the format \"" + meta.value("format", std::string()) +
                                       "\"; this engine reads " + kFormat + ": export it again with its examples/accum_pt2.py");
    const auto made_by = meta.value("torch_version", std::string("?"));
    if (release_of(made_by) != release_of(compat::kTorchVersion))
        throw refuse_package(path, "was compiled by torch " + made_by + " and this build links LibTorch " +
                                       compat::kTorchVersion +
                                       "; a compiled package runs only on the torch release that made it: export it "
                                       "again with torch " + release_of(compat::kTorchVersion) +
                                       " (examples/accum_pt2.py, hf_to_accum.py --format pt2)");
    auto model = std::make_shared<Pt2Model>(path, std::move(meta), kernels);
    try {
        model->load(read_weights(weights, path));
    } catch (const json::exception& e) {
        throw refuse_package(path, std::string("accum.json lacks what it must say: ") + e.what());
    }
    if (!model->has_label_shift() && config.loss_normalization == LossNormalization::Tokens)
        throw ConfigError(make_message(
            message_code::invalid_configuration,
            {{"option", "loss-normalization"},
             {"problem", "tokens cannot apply to " + path +
                             ": its loss is not a cross-entropy over logits the engine can match with the labels, "
                             "so the engine cannot count the tokens it averaged over; use --loss-normalization mean"}}));
    if (config.mixed_precision != MixedPrecision::No && !model->compiled_autocast())
        throw ConfigError(make_message(
            message_code::invalid_configuration,
            {{"option", "mixed-precision"},
             {"problem", "cannot reach the compiled step of " + path +
                             ": its dtypes were fixed when it was compiled; export it with "
                             "export_training_package(..., autocast=torch.bfloat16) for a bf16 step, or run "
                             "with --mixed-precision no"}}));
    model->bind(data);
    return model;
}

#endif

} // namespace accum
