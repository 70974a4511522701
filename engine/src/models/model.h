#pragma once
// The models. forward(batch) returns {loss, logits} like the Python
// `outputs = model(inputs, labels=targets)`; `loss` is the mean over the
// batch's label items and `loss_sum` their sum (for token normalisation).

#include <memory>
#include <string>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "accum/run_config.h"
#include "data/batch.h"
#include "data/dataset.h"

namespace accum {

struct ModelOutput {
    torch::Tensor loss;     // mean over label items
    torch::Tensor loss_sum; // sum over label items
    torch::Tensor logits;
};

class Model : public torch::nn::Module {
public:
    ModelOutput forward(const Batch& batch);
    virtual torch::Tensor logits(const Batch& batch) = 0;
    virtual std::string describe() const = 0;
    std::int64_t parameter_count() const;
};

// Builds the model the config names, sized from the data. Throws ConfigError.
std::shared_ptr<Model> make_model(const RunConfig& config, const TensorDataset& data);

// Whether the config's model is the MLP with a body that trains as one fused
// operator on the CPU (models/fused_dense.h): no BatchNorm, no dropout, and not
// switched off. The session chooses its threads by it.
bool mlp_trains_fused(const RunConfig& config);

// Cross-entropy over label items (ignore_index -100): the sum, and the sum divided
// by `items` (the mean over the label items).
struct CrossEntropy {
    torch::Tensor sum;
    torch::Tensor mean;
};
CrossEntropy cross_entropy(const torch::Tensor& logits, const torch::Tensor& labels, double items);

} // namespace accum
