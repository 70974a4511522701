#include "models/model.h"

#include "accum/errors.h"
#include "models/pt2_model.h"
#include "models/script_model.h"

namespace accum {

ModelOutput Model::forward(const Batch& batch) { return loss_from_logits(logits(batch), batch); }

ModelOutput Model::loss_from_logits(torch::Tensor logits_in, const Batch& batch) const {
    ModelOutput out;
    out.logits = std::move(logits_in);
    // Token logits [B, T, V] become rows; logits that already are rows are used as
    // they are (a reshape would add a view node to every micro-batch's backward).
    const auto& logits = out.logits;
    const auto rows = logits.dim() == 2 ? logits : logits.reshape({-1, logits.size(-1)});
    const auto targets = batch.labels.dim() == 1 ? batch.labels : batch.labels.reshape({-1});
    auto loss = kernels_.cross_entropy(rows, targets, kIgnoreIndex,
                                       static_cast<double>(std::max<std::int64_t>(1, batch.num_items)));
    out.loss_sum = std::move(loss.sum);
    out.loss = std::move(loss.mean);
    return out;
}

std::int64_t Model::parameter_count() const {
    std::int64_t n = 0;
    for (const auto& p : parameters()) n += p.numel();
    return n;
}

std::vector<torch::Tensor> Model::trainable_parameters() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : parameters())
        if (p.requires_grad()) out.push_back(p);
    return out;
}

std::shared_ptr<Model> make_mlp(const RunConfig& config, const TensorDataset& data, KernelSet kernels);
std::shared_ptr<Model> make_cnn(const RunConfig& config, const TensorDataset& data, KernelSet kernels);
std::shared_ptr<Model> make_transformer(const RunConfig& config, const TensorDataset& data, KernelSet kernels);

namespace {

std::shared_ptr<Model> build(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    switch (config.model) {
    case ModelKind::Mlp:
        return make_mlp(config, data, kernels);
    case ModelKind::Cnn:
        if (data.task != Task::ImageClassification)
            throw ConfigError("--model: the cnn needs image data (--dataset fashion-mnist)");
        return make_cnn(config, data, kernels);
    case ModelKind::Transformer:
        if (data.task != Task::SequenceClassification && data.task != Task::LanguageModeling)
            throw ConfigError("--model: the transformer needs token data (synthetic-pairs or synthetic-lm)");
        return make_transformer(config, data, kernels);
    case ModelKind::File:
        if (is_pt2_package(config.model_file)) return load_pt2_model(config, data, kernels);
        return load_script_model(config, data, kernels);
    }
    throw ConfigError("--model: unknown model");
}

} // namespace

std::shared_ptr<Model> make_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels) {
    auto model = build(config, data, kernels);
    model->set_gradient_checkpointing(config.gradient_checkpointing);
    return model;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
