#pragma once
// The models. forward(batch) returns {loss, logits} like the Python
// `outputs = model(inputs, labels=targets)`; `loss` is the mean over the
// batch's label items and `loss_sum` their sum (for token normalisation).

#include <memory>
#include <string>
#include <vector>

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
    torch::Tensor logits;   // undefined for a module that returns only its loss
    torch::Tensor labels;   // what the logits align with, where not the batch's labels (a shifted LM)
    // A tensor that every loss the loops take (loss, loss_sum, scaled) flows
    // through, where the logits are not: a module's own loss. The gradient sync
    // hooks it to know that this forward's backward has started.
    torch::Tensor backward_start;
    const torch::Tensor& first_in_backward() const { return backward_start.defined() ? backward_start : logits; }
};

class Model : public torch::nn::Module {
public:
    explicit Model(KernelSet kernels) : kernels_(kernels) {}
    // The built-in models: logits(batch), then the engine's cross-entropy over
    // the label items. A TorchScript module (script_model.h) may compute its own loss.
    virtual ModelOutput forward(const Batch& batch);
    // outputs = model(batch), as in Python.
    ModelOutput operator()(const Batch& batch) { return forward(batch); }
    // model.zero_grad() as PyTorch 2 (set_to_none=True); LibTorch 1.13 wrote zeros.
    void zero_grad(bool set_to_none = true) override { torch::nn::Module::zero_grad(set_to_none); }
    virtual torch::Tensor logits(const Batch& batch) = 0;
    virtual std::string describe() const = 0;
    std::int64_t parameter_count() const;
    // The parameters that take gradients (requires_grad), in parameters()'s
    // order: what the optimizer holds and the gradient sync averages. A frozen
    // parameter (a LoRA module's base weights) gets no gradient, no optimizer
    // state and no all-reduce, as in PyTorch's optimizers and DDP.
    std::vector<torch::Tensor> trainable_parameters() const;
    // The label positions the loss starts from: 0, or 1 for a causal LM that
    // shifts its labels itself (a Transformers model computing its own loss);
    // the data's label-item counts follow it (build_run_parts).
    virtual std::int64_t label_shift() const { return 0; }
    // How many classes (or tokens) the model's logits cover, where the data does
    // not decide it (a module from a file): the data's labels must lie below it
    // (build_run_parts checks every one at load). 0: the model was built to fit.
    virtual std::int64_t label_width() const { return 0; }
    // What the run should say once about how the data feeds the model (an
    // argument made up, a column left out). Empty for the built-in models.
    virtual std::vector<std::string> feeding_notes() const { return {}; }
    // A model loaded from a TorchScript file: the trained module as
    // torch.jit.save writes it (the checkpoints keep it beside model.pt, for
    // Python's torch.jit.load). Empty for the built-in models.
    virtual std::string torchscript_bytes() { return {}; }
    // --gradient-checkpointing: each block (the MLP's hidden layers, the
    // transformer's encoder layers) recomputes its activations in backward; the
    // CNN recomputes its first conv block and, on the CPU, runs its second in
    // chunks (cnn.cpp says when and why). Applies in training mode with gradients on
    // (the CNN evaluates in the same chunks, without recompute). make_model sets it
    // from the config; a benchmark may switch it between windows.
    void set_gradient_checkpointing(bool on) { checkpointing_ = on; }
    bool gradient_checkpointing() const { return checkpointing_; }

protected:
    const KernelSet& kernels() const { return kernels_; }
    // The engine's cross-entropy of `logits` against the batch's label items.
    ModelOutput loss_from_logits(torch::Tensor logits, const Batch& batch) const;
    bool checkpoints() const { return checkpointing_ && is_training(); }

private:
    KernelSet kernels_;
    bool checkpointing_ = false;
};

// How many chunks of the micro-batch a conv block of the CNN runs in under
// --gradient-checkpointing (CheckpointOptions::batch_chunks, run_in_chunks),
// given the bytes its convolution writes per sample: as many as keep each
// chunk's convolution output under kCheckpointChunkBytes, so that what a block
// holds at once (that output and its gradient, the largest tensors there) is
// about the same at any micro-batch. The CNN's first block (100 KB per image)
// runs 64 images in 7 chunks, its second (50 KB) in 4. 1 MiB because larger
// chunks left clearly more of the activations' peak and smaller ones barely
// less, in twice as many calls (bench/memory_levers with
// ACCUM_CHECKPOINT_CHUNK_BYTES: the 512 KiB … 4 MiB rows of the variants table in
// bench/MEMORY_LEVERS.md § "CNN: checkpoint the first block, run the second in chunks").
inline constexpr std::int64_t kCheckpointChunkBytes = std::int64_t{1} << 20;
std::int64_t checkpoint_chunks(std::int64_t batch_size, std::int64_t bytes_per_sample);

// Builds the model the config names, sized from the data, computing with
// `kernels`. Throws ConfigError.
std::shared_ptr<Model> make_model(const RunConfig& config, const TensorDataset& data, KernelSet kernels);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
