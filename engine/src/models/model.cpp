#include "models/model.h"

#include <torch/nn/functional/loss.h>

#include "accum/errors.h"
#include "models/fused_loss.h"

namespace accum {

namespace F = torch::nn::functional;

CrossEntropy cross_entropy(const torch::Tensor& logits, const torch::Tensor& labels, double items) {
    // Token logits [B, T, V] become rows; logits that already are rows are used as
    // they are (a reshape would add a view node to every micro-batch's backward).
    const auto classes = logits.size(-1);
    const auto rows = logits.dim() == 2 ? logits : logits.reshape({-1, classes});
    const auto targets = labels.dim() == 1 ? labels : labels.reshape({-1});
    if (fused_cross_entropy_available(rows, targets)) {
        auto [sum, mean] = fused_cross_entropy(rows, targets, kIgnoreIndex, items);
        return {sum, mean};
    }
    auto sum = F::cross_entropy(rows, targets,
                                F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).reduction(torch::kSum));
    auto mean = sum / items;
    return {sum, mean};
}

ModelOutput Model::forward(const Batch& batch) {
    ModelOutput out;
    out.logits = logits(batch);
    auto loss = cross_entropy(out.logits, batch.labels, static_cast<double>(std::max<std::int64_t>(1, batch.num_items)));
    out.loss_sum = std::move(loss.sum);
    out.loss = std::move(loss.mean);
    return out;
}

std::int64_t Model::parameter_count() const {
    std::int64_t n = 0;
    for (const auto& p : parameters()) n += p.numel();
    return n;
}

std::shared_ptr<Model> make_mlp(const RunConfig& config, const TensorDataset& data);
std::shared_ptr<Model> make_cnn(const RunConfig& config, const TensorDataset& data);
std::shared_ptr<Model> make_transformer(const RunConfig& config, const TensorDataset& data);

std::shared_ptr<Model> make_model(const RunConfig& config, const TensorDataset& data) {
    if (config.model == "mlp") return make_mlp(config, data);
    if (config.model == "cnn") {
        if (data.task != Task::ImageClassification)
            throw ConfigError("--model: the cnn needs image data (--dataset fashion-mnist)");
        return make_cnn(config, data);
    }
    if (config.model == "transformer") {
        if (data.task != Task::SequenceClassification && data.task != Task::LanguageModeling)
            throw ConfigError("--model: the transformer needs token data (synthetic-pairs or synthetic-lm)");
        return make_transformer(config, data);
    }
    throw ConfigError("--model: unknown model '" + config.model + "'");
}

} // namespace accum
