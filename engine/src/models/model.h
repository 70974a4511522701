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
#include "kernels/kernels.h"

namespace accum {

struct ModelOutput {
    torch::Tensor loss;     // mean over label items
    torch::Tensor loss_sum; // sum over label items
    torch::Tensor logits;
};

class Model : public torch::nn::Module {
public:
    explicit Model(KernelSet kernels) : kernels_(kernels) {}
    ModelOutput forward(const Batch& batch);
    // outputs = model(batch), as in Python.
    ModelOutput operator()(const Batch& batch) { return forward(batch); }
    // model.zero_grad() as PyTorch 2 (set_to_none=True); LibTorch 1.13 wrote zeros.
    void zero_grad(bool set_to_none = true) override { torch::nn::Module::zero_grad(set_to_none); }
    virtual torch::Tensor logits(const Batch& batch) = 0;
    virtual std::string describe() const = 0;
    std::int64_t parameter_count() const;

protected:
    const KernelSet& kernels() const { return kernels_; }

private:
    KernelSet kernels_;
};

// Builds the model the config names, sized from the data, computing with
// `kernels`. Throws ConfigError.
std::shared_ptr<Model> make_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels);

} // namespace accum
