// Gradient checkpointing for LibTorch's C++ API, which has none: the second
// memory lever beside accumulation (Transformers' gradient_checkpointing=True).
//
// checkpoint(block, inputs, parameters) runs the block without keeping what its
// backward would need (no graph is recorded inside it) and saves only its
// inputs. When the gradient reaches the block, its backward runs the block
// again with gradients on, from the saved inputs, and back-propagates through
// that copy. Memory: between forward and backward only the block boundaries
// stay alive; in backward one block's activations at a time. Time: one more
// forward of every checkpointed block.
//
// Like torch.utils.checkpoint's reentrant variant (CheckpointFunction), with
// these differences:
//  - the parameters the block reads are inputs of the autograd node, and its
//    backward returns their gradients (autograd::grad on the re-run), so they
//    reach .grad through the parameters' own AccumulateGrad as without
//    checkpointing: gradients accumulate over micro-batches as usual, a block
//    whose inputs need no gradient (the first layer) still trains its
//    parameters, and autograd::grad(loss, parameters) works through it;
//  - buffers the block updates in training (BatchNorm's running statistics) are
//    put back after the re-run, so they move once per forward, not twice;
//  - misuse is an error that says what to change (CheckpointError), not a
//    silently missing gradient.
//
// The CPU generator's state (and that of each CUDA device an input lies on) is
// taken before the forward and restored for the re-run, so dropout draws the
// same masks; the generator then continues from where it was, so later draws
// are those of a run without checkpointing. CPU and CUDA autocast are set for
// the re-run as they were in the forward.
//
// The block runs again during backward, after the caller's stack frame is gone:
// it must capture by value (a shared_ptr to its module, not `&`), and every
// tensor it reads should be one of `inputs` (or of `parameters`).
#pragma once

#include <functional>
#include <stdexcept>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torch::nn {
class Module;
} // namespace torch::nn

namespace accum {

// The block: the checkpointed part of a forward, over tensors.
using CheckpointBlock = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>& inputs)>;

struct CheckpointOptions {
    // Restore the random generators' state for the re-run (dropout draws the
    // same masks). Off only for blocks that draw no random numbers.
    bool preserve_rng_state = true;
    // Run the block over the batch in this many chunks, forward and re-run:
    // what the block holds at once (its own activations and, in backward,
    // their gradients) shrinks by this factor; the parameters' gradients are
    // the sum over the chunks (equal to rounding). For blocks that treat the
    // samples independently (convolutions, attention within a sequence; not
    // BatchNorm in training, refused). The first input's first dimension is
    // the batch; inputs of that size are split, others passed whole; outputs
    // must have the batch first. Dropout draws chunk by chunk, the same in the
    // forward and the re-run; that equals one draw over the batch (a run without
    // checkpointing) where the CPU generator fills tensors element by element
    // (LibTorch without MKL, as Debian's), not with MKL's bernoulli.
    std::int64_t batch_chunks = 1;
};

// A block used in a way checkpointing cannot serve; the message says what to change.
class CheckpointError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

// Runs block(inputs), keeping only `inputs` for backward. `parameters`: every
// tensor that requires grad that the block reads besides its inputs (a
// module's parameters). `buffers`: tensors the block updates in place (a
// module's buffers), restored after the re-run. Without grad mode, or when
// nothing requires grad, this is block(inputs). Throws CheckpointError for an
// empty block or an undefined tensor; in backward, for a block that reads a
// tensor requiring grad that is neither an input nor a parameter, or whose
// re-run gives outputs of other shapes or types.
std::vector<at::Tensor> checkpoint(CheckpointBlock block, const std::vector<at::Tensor>& inputs,
                                   const std::vector<at::Tensor>& parameters,
                                   const std::vector<at::Tensor>& buffers = {}, CheckpointOptions options = {});

// The same for a module: its parameters (those that require grad) and buffers.
std::vector<at::Tensor> checkpoint(const torch::nn::Module& module, CheckpointBlock block,
                                   const std::vector<at::Tensor>& inputs, CheckpointOptions options = {});

// One tensor in, one out, e.g. for a torch::nn::Sequential `block`:
//   x = checkpoint(*block, [m = block.ptr()](const at::Tensor& t) { return m->forward(t); }, x);
at::Tensor checkpoint(const torch::nn::Module& module, std::function<at::Tensor(const at::Tensor&)> block,
                      const at::Tensor& input, CheckpointOptions options = {});

// Runs block(inputs) over the batch in `chunks` chunks with the graph kept (no
// re-run), each output the concatenation of the chunks'. What the block holds
// at once shrinks by about this factor — in forward its temporaries, in backward
// its outputs' gradients and its operators' working sets (autograd runs the
// newest ready node first: one chunk's backward ends before the next begins) —
// but not what it saves for backward; a
// block that saves its own outputs (a ReLU, the fused ReLU + max-pool) holds
// them twice until backward, the chunks' and the concatenation. For a block
// whose working set sets the peak rather than its saved activations, this is
// the cheap lever: a concatenation instead of a forward. Inputs are split as
// with batch_chunks, for blocks that treat the samples independently (not
// BatchNorm in training). Throws CheckpointError for an empty block, chunks < 1,
// a first input without a batch dimension, or outputs without the batch first.
std::vector<at::Tensor> run_in_chunks(const CheckpointBlock& block, const std::vector<at::Tensor>& inputs,
                                      std::int64_t chunks);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
