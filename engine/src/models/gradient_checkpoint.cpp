#include "models/gradient_checkpoint.h"

#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/SequenceNumber.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/ivalue.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/nn/module.h>
#include "torch_compat.h"

namespace accum {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::string shape_text(const at::Tensor& t) {
    std::string s = "[";
    for (std::int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
    return s + "] " + std::string(c10::toString(t.scalar_type()));
}

// The batch in chunks: (offset, length) pairs; one chunk is the whole.
using ChunkRange = std::pair<std::int64_t, std::int64_t>;
std::vector<ChunkRange> chunk_ranges(std::int64_t batch, std::int64_t chunks) {
    if (chunks <= 1 || batch <= 0) return {{0, batch}};
    std::vector<ChunkRange> out;
    const auto step = (batch + chunks - 1) / chunks;
    for (std::int64_t offset = 0; offset < batch; offset += step) out.emplace_back(offset, std::min(step, batch - offset));
    return out;
}

// Which inputs are split with the batch: those whose first dimension is the
// first input's (the batch).
std::vector<bool> batch_inputs(const std::vector<at::Tensor>& inputs) {
    std::vector<bool> split;
    for (const auto& x : inputs) split.push_back(x.dim() > 0 && x.size(0) == inputs[0].size(0));
    return split;
}

// The inputs of each chunk: those split with the batch cut into the chunks'
// ranges, the others whole. One split, not a narrow per chunk: with gradients
// on, autograd then gathers the input's gradient once, where each narrow would
// give a gradient of the whole batch's size.
std::vector<std::vector<at::Tensor>> chunk_inputs(const std::vector<at::Tensor>& inputs, const std::vector<bool>& split,
                                                  const std::vector<ChunkRange>& ranges) {
    std::vector<std::vector<at::Tensor>> out(ranges.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const auto pieces = split[i] && ranges.size() > 1 ? inputs[i].split(ranges[0].second, 0) : std::vector<at::Tensor>{};
        for (std::size_t k = 0; k < ranges.size(); ++k) out[k].push_back(pieces.empty() ? inputs[i] : pieces[k]);
    }
    return out;
}

// block(inputs), chunk by chunk over the batch, each output the concatenation
// of the chunks' (one chunk: the block's own). `who` begins the errors.
std::vector<at::Tensor> run_chunks(const CheckpointBlock& block, const std::vector<at::Tensor>& inputs,
                                   const std::vector<bool>& split, std::int64_t batch, std::int64_t chunks,
                                   const std::string& who) {
    std::vector<std::vector<at::Tensor>> parts; // per output, per chunk
    const auto ranges = chunk_ranges(batch, chunks);
    const auto chunk_in = chunk_inputs(inputs, split, ranges);
    for (std::size_t k = 0; k < ranges.size(); ++k) {
        const auto& range = ranges[k];
        const auto outputs = block(chunk_in[k]);
        if (outputs.empty()) throw CheckpointError(who + ": the block returned no tensors");
        if (parts.empty()) parts.resize(outputs.size());
        if (outputs.size() != parts.size())
            throw CheckpointError(who + ": the block returned a different number of tensors for another chunk");
        for (std::size_t j = 0; j < outputs.size(); ++j) {
            if (!outputs[j].defined())
                throw CheckpointError(who + ": the block's output " + std::to_string(j) + " is undefined");
            if (chunks > 1 && (outputs[j].dim() == 0 || outputs[j].size(0) != range.second))
                throw CheckpointError(who + ": in chunks the block's outputs must have the batch as their first "
                                            "dimension (output " +
                                      std::to_string(j) + " is " + shape_text(outputs[j]) + ")");
            parts[j].push_back(outputs[j]);
        }
    }
    std::vector<at::Tensor> outputs;
    for (auto& p : parts) outputs.push_back(p.size() == 1 ? p[0] : at::cat(p, 0));
    return outputs;
}

// Autocast as the forward had it.
struct AutocastState {
    bool cpu = false;
    at::ScalarType cpu_dtype = at::kBFloat16;
    bool gpu = false;
    at::ScalarType gpu_dtype = at::kHalf;
};

AutocastState current_autocast() {
    return {compat::autocast_enabled(at::kCPU), compat::autocast_dtype(at::kCPU), compat::autocast_enabled(at::kCUDA),
            compat::autocast_dtype(at::kCUDA)};
}
void set_autocast(const AutocastState& s) {
    compat::set_autocast_enabled(at::kCPU, s.cpu);
    compat::set_autocast_dtype(at::kCPU, s.cpu_dtype);
    compat::set_autocast_enabled(at::kCUDA, s.gpu);
    compat::set_autocast_dtype(at::kCUDA, s.gpu_dtype);
}

// Everything the backward needs besides the saved tensors. Held by the autograd
// node (in its context's saved_data, as a capsule) until the node goes.
struct CheckpointState final : torch::CustomClassHolder {
    CheckpointBlock block;
    std::vector<at::Tensor> buffers;
    CheckpointOptions options;
    std::size_t num_inputs = 0;
    std::size_t num_parameters = 0;
    std::vector<bool> input_requires_grad;
    // batch_chunks > 1: the batch (the first input's first dimension) and which
    // inputs are split with it (those whose first dimension is the batch).
    std::int64_t batch = 0;
    std::vector<bool> input_split;
    // Random generators as they were before the forward.
    std::optional<at::Generator> cpu_generator; // a copy of the CPU generator
    std::vector<std::pair<at::Device, at::Tensor>> cuda_generators; // device, state
    AutocastState autocast;
    // What the forward returned, to check the re-run against.
    std::vector<std::vector<std::int64_t>> output_sizes;
    std::vector<at::ScalarType> output_types;
    std::thread::id forward_thread;
};

// Sets the generators to the forward's state; puts back the state they had
// (after the forward and everything since) when it goes.
class RngFork {
public:
    explicit RngFork(const CheckpointState& s) {
        if (!s.options.preserve_rng_state) return;
        cpu_ = at::detail::getDefaultCPUGenerator();
        {
            auto forward = *s.cpu_generator; // shares the copy's state
            const auto forward_state = [&] {
                std::lock_guard<std::mutex> lock(forward.mutex());
                return forward.get_state();
            }();
            std::lock_guard<std::mutex> lock(cpu_->mutex());
            cpu_outer_ = cpu_->get_state();
            cpu_->set_state(forward_state);
        }
        for (const auto& [device, state] : s.cuda_generators) {
            auto generator = at::globalContext().defaultGenerator(device); // shares the device's generator
            std::lock_guard<std::mutex> lock(generator.mutex());
            cuda_outer_.emplace_back(generator, generator.get_state());
            generator.set_state(state);
        }
    }
    ~RngFork() {
        if (cpu_) {
            std::lock_guard<std::mutex> lock(cpu_->mutex());
            cpu_->set_state(cpu_outer_);
        }
        for (auto& [generator, state] : cuda_outer_) {
            std::lock_guard<std::mutex> lock(generator.mutex());
            generator.set_state(state);
        }
    }
    RngFork(const RngFork&) = delete;
    RngFork& operator=(const RngFork&) = delete;

private:
    std::optional<at::Generator> cpu_;
    at::Tensor cpu_outer_;
    std::vector<std::pair<at::Generator, at::Tensor>> cuda_outer_;
};

// Autocast as in the forward, for the re-run; as it was when it goes. Like
// Python's autocast context manager, the cast cache is cleared when the
// outermost autocast scope ends.
class AutocastAs {
public:
    explicit AutocastAs(const AutocastState& s) : outer_(current_autocast()) {
        set_autocast(s);
        at::autocast::increment_nesting();
    }
    ~AutocastAs() {
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        set_autocast(outer_);
    }
    AutocastAs(const AutocastAs&) = delete;
    AutocastAs& operator=(const AutocastAs&) = delete;

private:
    AutocastState outer_;
};

// The buffers as they were before the re-run, put back after it: the re-run of
// a BatchNorm in training would move its running statistics a second time.
class BuffersKept {
public:
    explicit BuffersKept(const std::vector<at::Tensor>& buffers) : buffers_(buffers) {
        at::NoGradGuard no_grad;
        for (const auto& b : buffers_) copies_.push_back(b.defined() ? b.clone() : b);
    }
    ~BuffersKept() {
        at::NoGradGuard no_grad;
        for (std::size_t i = 0; i < buffers_.size(); ++i)
            if (buffers_[i].defined()) buffers_[i].copy_(copies_[i]);
    }
    BuffersKept(const BuffersKept&) = delete;
    BuffersKept& operator=(const BuffersKept&) = delete;

private:
    std::vector<at::Tensor> buffers_, copies_;
};

// Walks the re-run's graph from its outputs. Every leaf that requires grad must
// be an input or a parameter: autograd::grad would not return a gradient for
// any other, so it would be lost. On the forward's thread, a node older than
// the re-run means a tensor computed outside the block, with a graph of its
// own, was captured: its gradient would be lost too.
void check_graph(const std::vector<at::Tensor>& roots, const std::unordered_set<const at::TensorImpl*>& allowed,
                 std::uint64_t rerun_began, bool forward_thread) {
    std::vector<torch::autograd::Node*> stack;
    std::unordered_set<const torch::autograd::Node*> seen;
    for (const auto& r : roots)
        if (const auto& fn = r.grad_fn()) {
            if (seen.insert(fn.get()).second) stack.push_back(fn.get());
        }
    while (!stack.empty()) {
        auto* node = stack.back();
        stack.pop_back();
        for (const auto& edge : node->next_edges()) {
            if (!edge.is_valid()) continue;
            auto* next = edge.function.get();
            if (!seen.insert(next).second) continue;
            if (const auto* leaf = dynamic_cast<const torch::autograd::AccumulateGrad*>(next)) {
                if (!allowed.count(leaf->variable.unsafeGetTensorImpl()))
                    throw CheckpointError("checkpoint: the block reads a tensor that requires grad (" +
                                          shape_text(leaf->variable) +
                                          ") and is neither one of its inputs nor one of its parameters, so its "
                                          "gradient would be lost; pass it in `parameters` (or checkpoint the module "
                                          "that owns it)");
                continue;
            }
            if (forward_thread && next->sequence_nr() < rerun_began)
                throw CheckpointError("checkpoint: the block reads a tensor that requires grad and was computed "
                                      "outside it (by " +
                                      next->name() +
                                      "), so its gradient would be lost; pass that tensor as one of the block's "
                                      "inputs");
            stack.push_back(next);
        }
    }
}

void add_to(at::Tensor& sum, const at::Tensor& g) {
    if (g.defined()) sum = sum.defined() ? sum + g : g;
}

class CheckpointFunction final : public torch::autograd::Function<CheckpointFunction> {
public:
    static variable_list forward(AutogradContext* ctx, const c10::intrusive_ptr<CheckpointState>& state,
                                 at::TensorList inputs, at::TensorList parameters) {
        // Grad mode is off here (Function::apply): the block records no graph.
        auto& s = *state;
        s.num_inputs = inputs.size();
        s.num_parameters = parameters.size();
        s.forward_thread = std::this_thread::get_id();
        s.autocast = current_autocast();
        for (const auto& x : inputs) s.input_requires_grad.push_back(x.requires_grad());
        if (s.options.batch_chunks > 1) {
            s.batch = inputs[0].size(0);
            s.input_split = batch_inputs(inputs.vec());
        } else {
            s.input_split.assign(inputs.size(), false);
        }
        if (s.options.preserve_rng_state) {
            auto cpu = at::detail::getDefaultCPUGenerator(); // shares the generator
            {
                std::lock_guard<std::mutex> lock(cpu.mutex());
                s.cpu_generator = cpu.clone();
            }
            for (const auto& x : inputs) {
                if (!x.is_cuda()) continue;
                bool known = false;
                for (const auto& [device, state_tensor] : s.cuda_generators) known = known || device == x.device();
                if (known) continue;
                auto generator = at::globalContext().defaultGenerator(x.device());
                std::lock_guard<std::mutex> lock(generator.mutex());
                s.cuda_generators.emplace_back(x.device(), generator.get_state());
            }
        }
        std::vector<at::Tensor> to_save(inputs.begin(), inputs.end());
        // The parameters are saved too (a reference, not a copy): their version
        // counters then catch an update between this forward and its backward.
        to_save.insert(to_save.end(), parameters.begin(), parameters.end());
        ctx->save_for_backward(std::move(to_save));
        ctx->saved_data["state"] = c10::IValue::make_capsule(state);
        ctx->set_materialize_grads(false);

        const auto outputs = run_chunks(s.block, inputs.vec(), s.input_split, s.batch, s.options.batch_chunks, "checkpoint");
        for (const auto& o : outputs) {
            s.output_sizes.push_back(o.sizes().vec());
            s.output_types.push_back(o.scalar_type());
        }
        return outputs;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        auto& s = *static_cast<CheckpointState*>(ctx->saved_data.at("state").toCapsule().get());
        const auto saved = ctx->get_saved_variables(); // throws if an input was modified in place since
        const bool create_graph = at::GradMode::is_enabled();
        const bool chunked = s.options.batch_chunks > 1;

        // Put back when this function returns, after the backward through the
        // re-run: that graph saved the buffers (BatchNorm's running statistics)
        // at the version the re-run left.
        const BuffersKept buffers(s.buffers);
        // The chunks are re-run in the forward's order, so each draws what its
        // forward drew; back-propagation draws nothing.
        const RngFork rng(s);
        std::vector<at::Tensor> input_grads(s.num_inputs), parameter_grads(s.num_parameters);
        std::vector<std::vector<at::Tensor>> input_parts(s.num_inputs);
        const std::vector<at::Tensor> saved_inputs(saved.begin(), saved.begin() + static_cast<std::ptrdiff_t>(s.num_inputs));
        const auto ranges = chunk_ranges(s.batch, s.options.batch_chunks);
        const auto chunk_in = chunk_inputs(saved_inputs, s.input_split, ranges);
        for (std::size_t k = 0; k < ranges.size(); ++k) {
            const auto& range = ranges[k];
            auto inputs = chunk_in[k];
            for (std::size_t i = 0; i < s.num_inputs; ++i) {
                inputs[i] = inputs[i].detach();
                if (s.input_requires_grad[i]) inputs[i].requires_grad_(true);
            }
            const auto rerun_began = at::sequence_number::peek();
            std::vector<at::Tensor> outputs;
            {
                const AutocastAs autocast(s.autocast);
                const at::AutoGradMode grad(true);
                outputs = s.block(inputs);
            }
            if (outputs.size() != s.output_sizes.size())
                throw CheckpointError("checkpoint: the block returned " + std::to_string(outputs.size()) +
                                      " tensors when re-run in backward, " + std::to_string(s.output_sizes.size()) +
                                      " in forward; it must compute the same from the same inputs");
            for (std::size_t j = 0; j < outputs.size(); ++j) {
                auto expected = s.output_sizes[j];
                if (chunked) expected[0] = range.second;
                if (!outputs[j].defined() || outputs[j].sizes().vec() != expected ||
                    outputs[j].scalar_type() != s.output_types[j])
                    throw CheckpointError("checkpoint: the block's output " + std::to_string(j) +
                                          " differs in shape or type when re-run in backward; it must compute the "
                                          "same from the same inputs");
            }

            std::vector<at::Tensor> roots, root_grads;
            for (std::size_t j = 0; j < outputs.size(); ++j)
                if (outputs[j].requires_grad() && j < grad_outputs.size() && grad_outputs[j].defined()) {
                    roots.push_back(outputs[j]);
                    root_grads.push_back(chunked ? grad_outputs[j].narrow(0, range.first, range.second) : grad_outputs[j]);
                }

            // What the gradient goes to: the inputs that require it, then the
            // parameters (index k < num_inputs: input k; else parameter k - num_inputs).
            std::unordered_set<const at::TensorImpl*> allowed;
            std::vector<at::Tensor> targets;
            std::vector<std::size_t> which;
            for (std::size_t i = 0; i < s.num_inputs; ++i) {
                if (!inputs[i].requires_grad()) continue;
                allowed.insert(inputs[i].unsafeGetTensorImpl());
                if (ctx->needs_input_grad(i)) {
                    targets.push_back(inputs[i]);
                    which.push_back(i);
                }
            }
            for (std::size_t j = 0; j < s.num_parameters; ++j) {
                const auto& p = saved[s.num_inputs + j];
                allowed.insert(p.unsafeGetTensorImpl());
                if (p.requires_grad() && ctx->needs_input_grad(s.num_inputs + j)) {
                    targets.push_back(p);
                    which.push_back(s.num_inputs + j);
                }
            }
            check_graph(roots, allowed, rerun_began, std::this_thread::get_id() == s.forward_thread);
            if (roots.empty() || targets.empty()) continue;
            auto grads = torch::autograd::grad(roots, targets, root_grads, /*retain_graph=*/create_graph, create_graph,
                                               /*allow_unused=*/true);
            outputs.clear(); // this chunk's re-run goes before the next
            for (std::size_t k = 0; k < targets.size(); ++k) {
                const auto index = which[k];
                if (index >= s.num_inputs) {
                    add_to(parameter_grads[index - s.num_inputs], grads[k]);
                } else if (s.input_split[index]) {
                    input_parts[index].push_back(grads[k].defined() ? grads[k] : at::zeros_like(inputs[index]));
                } else {
                    add_to(input_grads[index], grads[k]);
                }
            }
        }
        variable_list result(1 + s.num_inputs + s.num_parameters); // slot 0: the state
        for (std::size_t i = 0; i < s.num_inputs; ++i) {
            auto& parts = input_parts[i];
            if (!s.input_split[i])
                result[1 + i] = input_grads[i];
            else if (!parts.empty())
                result[1 + i] = parts.size() == 1 ? parts[0] : at::cat(parts, 0);
        }
        for (std::size_t j = 0; j < s.num_parameters; ++j) result[1 + s.num_inputs + j] = parameter_grads[j];
        return result;
    }
};

} // namespace

std::vector<at::Tensor> checkpoint(CheckpointBlock block, const std::vector<at::Tensor>& inputs,
                                   const std::vector<at::Tensor>& parameters, const std::vector<at::Tensor>& buffers,
                                   CheckpointOptions options) {
    if (!block) throw CheckpointError("checkpoint: the block is empty");
    bool needs_grad = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].defined()) throw CheckpointError("checkpoint: input " + std::to_string(i) + " is undefined");
        needs_grad = needs_grad || inputs[i].requires_grad();
    }
    for (std::size_t j = 0; j < parameters.size(); ++j) {
        if (!parameters[j].defined())
            throw CheckpointError("checkpoint: parameter " + std::to_string(j) + " is undefined");
        needs_grad = needs_grad || parameters[j].requires_grad();
    }
    if (options.batch_chunks < 1)
        throw CheckpointError("checkpoint: batch_chunks is " + std::to_string(options.batch_chunks) + "; it must be 1 or more");
    if (options.batch_chunks > 1) {
        if (inputs.empty() || inputs[0].dim() == 0)
            throw CheckpointError("checkpoint: batch_chunks needs a first input with the batch as its first dimension");
        for (const auto& b : buffers)
            if (b.defined())
                throw CheckpointError("checkpoint: batch_chunks with buffers (BatchNorm): statistics over a chunk are "
                                      "not those of the batch; checkpoint such a block whole (batch_chunks 1)");
    }
    // Nothing to back-propagate (evaluation, or no gradient wanted): nothing to save.
    if (!at::GradMode::is_enabled() || !needs_grad) return block(inputs);
    auto state = c10::make_intrusive<CheckpointState>();
    state->block = std::move(block);
    state->buffers = buffers;
    state->options = options;
    return CheckpointFunction::apply(state, at::TensorList(inputs), at::TensorList(parameters));
}

std::vector<at::Tensor> run_in_chunks(const CheckpointBlock& block, const std::vector<at::Tensor>& inputs,
                                      std::int64_t chunks) {
    if (!block) throw CheckpointError("run_in_chunks: the block is empty");
    if (chunks < 1) throw CheckpointError("run_in_chunks: chunks is " + std::to_string(chunks) + "; it must be 1 or more");
    if (inputs.empty() || !inputs[0].defined() || inputs[0].dim() == 0)
        throw CheckpointError("run_in_chunks: needs a first input with the batch as its first dimension");
    return run_chunks(block, inputs, batch_inputs(inputs), inputs[0].size(0), chunks, "run_in_chunks");
}

std::vector<at::Tensor> checkpoint(const torch::nn::Module& module, CheckpointBlock block,
                                   const std::vector<at::Tensor>& inputs, CheckpointOptions options) {
    std::vector<at::Tensor> parameters;
    for (const auto& p : module.parameters())
        if (p.requires_grad()) parameters.push_back(p);
    return checkpoint(std::move(block), inputs, parameters, module.buffers(), options);
}

at::Tensor checkpoint(const torch::nn::Module& module, std::function<at::Tensor(const at::Tensor&)> block,
                      const at::Tensor& input, CheckpointOptions options) {
    if (!block) throw CheckpointError("checkpoint: the block is empty");
    auto outputs = checkpoint(
        module, [fn = std::move(block)](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{fn(in[0])}; },
        {input}, options);
    return outputs[0];
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
