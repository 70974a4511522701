#include "kernels/fused_dense.h"

#include <algorithm>

#include <atomic>
#include <mutex>

#include <ATen/Parallel.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/threshold_backward.h>
#include <torch/csrc/autograd/custom_function.h>

#include "kernels/dense_kernels.h"

namespace accum {

namespace {

// Runs fn(row_begin, row_end) over the rows of an output, split between
// LibTorch's intra-op threads when each share holds enough work (multiply-adds
// per row) to pay for it. One share per thread, of nearly equal size (boundaries
// at the row block nearest to an even split): splitting whole blocks in
// parallel_for's chunks gave one thread 132 of 256 rows and the other 124, and
// every region waited for the larger share.
template <class Fn>
void for_rows(std::int64_t rows, std::int64_t work_per_row, const Fn& fn) {
    constexpr std::int64_t min_work = 1 << 18; // multiply-adds a task must have to pay for its hand-off
    const auto blocks = (rows + dense::kRowBlock - 1) / dense::kRowBlock;
    const auto grain = std::max<std::int64_t>(1, min_work / std::max<std::int64_t>(1, work_per_row * dense::kRowBlock));
    const auto shares = std::min<std::int64_t>(at::get_num_threads(), blocks / grain);
    if (shares <= 1) return fn(0, rows);
    const auto first_row = [&](std::int64_t share) {
        if (share == shares) return rows;
        return (rows * share / shares + dense::kRowBlock / 2) / dense::kRowBlock * dense::kRowBlock;
    };
    at::parallel_for(0, shares, 1, [&](std::int64_t begin, std::int64_t end) {
        for (auto share = begin; share < end; ++share) fn(first_row(share), first_row(share + 1));
    });
}

// m × features (contiguous) → the panel layout of dense_kernels.h.
at::Tensor to_panels(const at::Tensor& rows) {
    const auto m = rows.size(0), features = rows.size(1);
    auto out = at::empty({dense::panel_size(m, features)}, rows.options());
    dense::to_panels(m, features, rows.data_ptr<float>(), features, out.data_ptr<float>());
    return out;
}

// The panel layout of m items → m × features.
at::Tensor from_panels(const at::Tensor& panels, std::int64_t m, std::int64_t features) {
    auto out = at::empty({m, features}, panels.options());
    dense::from_panels(m, features, panels.data_ptr<float>(), out.data_ptr<float>());
    return out;
}

// Where the backward writes a parameter's gradient.
struct GradientTarget {
    at::Tensor tensor;
    bool accumulate; // add to what the tensor holds
};

// The parameter's own .grad when the call asked for gradients in place and
// autograd would only add the gradient into it: no graph of the backward is being built, the
// parameter is a leaf and its .grad is undefined (created here, as
// AccumulateGrad would) or a plain contiguous float tensor of its shape. The
// backward then returns no gradient for it. Otherwise a new tensor, returned in
// `returned` for autograd to accumulate.
GradientTarget gradient_of(const at::Tensor& param, bool in_place, at::Tensor& returned) {
    if (in_place && !at::GradMode::is_enabled() && param.is_leaf()) {
        auto& grad = param.mutable_grad();
        if (!grad.defined()) {
            grad = at::empty(param.sizes(), param.options());
            return {grad, false};
        }
        if (!grad.requires_grad() && grad.layout() == at::kStrided && grad.is_contiguous() &&
            grad.scalar_type() == at::kFloat && grad.device() == param.device() && grad.sizes() == param.sizes())
            return {grad, true};
    }
    returned = at::empty(param.sizes(), param.options());
    return {returned, false};
}

std::atomic<bool> notes_armed{false}; // arm_gradient_notes
// Keeps Σ dW² of the in-place gradient `grad` of `param` (gradient notes, fused_dense.h).
void note_gradient(const at::Tensor& param, const at::Tensor& grad, double squares);
void forget_gradient_notes();

class FusedDense final : public torch::autograd::Function<FusedDense> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input_in,
                              at::TensorList params_in, bool gradients_in_place) {
        const auto input = input_in.contiguous();
        const auto m = input.size(0);
        const auto layers = static_cast<std::int64_t>(params_in.size() / 2);
        std::vector<at::Tensor> params;
        for (const auto& p : params_in) params.push_back(p.contiguous());
        // to_save: the input, each layer's transposed input, then the parameters
        // (1 + 3 · layers tensors).
        std::vector<at::Tensor> to_save{input};
        at::Tensor ht; // the layer's input in panel layout; layer 0 reads the input as it is
        for (std::int64_t l = 0; l < layers; ++l) {
            const auto& w = params[2 * l];
            const auto& b = params[2 * l + 1];
            const auto n = w.size(0), k = w.size(1);
            const bool relu = l + 1 < layers;
            auto yt = at::empty({dense::panel_size(m, n)}, input.options());
            for_rows(n, k * m, [&](std::int64_t begin, std::int64_t end) {
                if (l == 0)
                    dense::forward_rows(n, k, m, w.data_ptr<float>(), input.data_ptr<float>(), b.data_ptr<float>(),
                                        relu, yt.data_ptr<float>(), begin, end);
                else
                    dense::forward(n, k, m, w.data_ptr<float>(), ht.data_ptr<float>(), b.data_ptr<float>(), relu,
                                   yt.data_ptr<float>(), begin, end);
            });
            to_save.push_back(ht);
            ht = yt;
        }
        to_save.insert(to_save.end(), params_in.begin(), params_in.end());
        ctx->save_for_backward(to_save);
        ctx->saved_data["in_place"] = gradients_in_place;
        return from_panels(ht, m, params.back().size(0));
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto layers = static_cast<std::int64_t>(saved.size() - 1) / 3; // see to_save
        const auto& input = saved[0];
        const bool in_place = ctx->saved_data["in_place"].toBool();
        const auto m = input.size(0);
        auto gt = to_panels(grads[0].contiguous());
        torch::autograd::variable_list grads_out(2 + 2 * layers); // the input's, W₀, b₀, W₁, …, the flag's
        for (auto l = layers - 1; l >= 0; --l) {
            const auto& ht = saved[1 + l]; // the layer's input, transposed (after the ReLU below it)
            const auto& w_param = saved[1 + layers + 2 * l];
            const auto& b_param = saved[1 + layers + 2 * l + 1];
            const auto w = w_param.contiguous();
            const auto n = w.size(0), k = w.size(1);
            if (w_param.requires_grad()) {
                const auto x = l == 0 ? input : from_panels(ht, m, k);
                auto dw = gradient_of(w_param, in_place, grads_out[1 + 2 * l]);
                const bool into_grad = dw.tensor.is_same(w_param.grad());
                const bool note = into_grad && notes_armed.load(std::memory_order_relaxed);
                std::atomic<double> squares{0.0};
                for_rows(n, k * m, [&](std::int64_t begin, std::int64_t end) {
                    double part = 0.0;
                    dense::backward_weight(n, k, m, gt.data_ptr<float>(), x.data_ptr<float>(), k,
                                           dw.tensor.data_ptr<float>(), dw.accumulate, begin, end,
                                           note ? &part : nullptr);
                    if (note) squares.fetch_add(part, std::memory_order_relaxed);
                });
                if (note) note_gradient(w_param, dw.tensor, squares.load());
                else if (into_grad) forget_gradient_notes();
            }
            if (b_param.requires_grad()) {
                auto db = gradient_of(b_param, in_place, grads_out[2 + 2 * l]);
                dense::backward_bias(n, m, gt.data_ptr<float>(), db.tensor.data_ptr<float>(), db.accumulate);
            }
            if (l == 0 && !input.requires_grad()) break;
            auto dxt = at::empty({dense::panel_size(m, k)}, gt.options());
            const float* mask = l == 0 ? nullptr : ht.data_ptr<float>();
            for_rows(k, n * m, [&](std::int64_t begin, std::int64_t end) {
                dense::backward_input(n, k, m, w.data_ptr<float>(), gt.data_ptr<float>(), mask,
                                      dxt.data_ptr<float>(), begin, end);
            });
            gt = dxt;
        }
        if (input.requires_grad()) grads_out[0] = from_panels(gt, m, input.size(1));
        return grads_out;
    }
};

// Moves whenever parameters may have changed where their version counters do not
// see it (dense_weights_changed).
std::atomic<std::uint64_t> weights_generation{0};

// Values kept for parameters: an entry holds its parameter, and entries whose
// parameter nothing else holds any more (a finished run's model) are dropped at
// each lookup.
template <class Value>
class PerParameter {
public:
    Value* find(const at::Tensor& param) {
        std::erase_if(entries_, [](const Entry& e) { return e.param.use_count() == 1; });
        for (auto& e : entries_)
            if (e.param.unsafeGetTensorImpl() == param.unsafeGetTensorImpl()) return &e.value;
        return nullptr;
    }
    Value& add(const at::Tensor& param, Value value) {
        entries_.push_back({param, std::move(value)});
        return entries_.back().value;
    }

private:
    struct Entry {
        at::Tensor param;
        Value value;
    };
    std::vector<Entry> entries_;
};

struct GradientNote {
    const void* grad;          // the .grad tensor noted
    std::int64_t version;      // its version then
    std::uint64_t generation;  // arm_gradient_notes() then
    double squares;
};
std::mutex notes_mutex;
PerParameter<GradientNote> notes;
std::uint64_t notes_generation = 0; // guarded by notes_mutex
std::atomic<bool> notes_held{false}; // a note of this generation may exist

void note_gradient(const at::Tensor& param, const at::Tensor& grad, double squares) {
    const GradientNote note{grad.unsafeGetTensorImpl(), static_cast<std::int64_t>(grad._version()), 0, squares};
    std::lock_guard<std::mutex> lock(notes_mutex);
    auto* found = notes.find(param);
    auto& entry = found != nullptr ? *found : notes.add(param, note);
    entry = note;
    entry.generation = notes_generation;
    notes_held = true;
}

// This backward wrote .grad in place without noting it, and without moving its
// version: whatever was noted of it is stale, so the notes end their generation.
// One atomic load per weight when none is held (the window's later backwards).
void forget_gradient_notes() {
    if (!notes_held.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(notes_mutex);
    ++notes_generation;
    notes_held = false;
}

// The bf16 copies of float32 parameters, kept while a parameter is unchanged, so
// that under accumulation one copy serves the window's K micro-batches where
// autocast casts each weight again in every micro-batch's forward (its cast cache
// lives for one autocast region). Unchanged: the same parameter, its version
// counter where it was (an in-place update through autograd's view moves it) and
// no dense_weights_changed() since (LibTorch's C++ optimizers update parameters
// through .data(), which the version counter does not see).
class Bf16Copies {
public:
    at::Tensor of(const at::Tensor& param) {
        std::lock_guard<std::mutex> lock(mutex_);
        const Copy now{param._version(), weights_generation.load(), {}};
        auto* copy = copies_.find(param);
        if (!copy) copy = &copies_.add(param, now);
        if (!copy->tensor.defined() || copy->version != now.version || copy->generation != now.generation)
            *copy = {now.version, now.generation, param.detach().to(at::kBFloat16)};
        return copy->tensor;
    }

private:
    struct Copy {
        std::int64_t version;
        std::uint64_t generation;
        at::Tensor tensor;
    };
    std::mutex mutex_;
    PerParameter<Copy> copies_;
};

// A bf16 buffer for each parameter's gradient product, kept between micro-batches:
// allocating a weight-sized buffer and freeing it in every micro-batch made glibc
// consolidate its free lists each time (thread-local: each backward
// thread its own).
at::Tensor& product_buffer(const at::Tensor& param) {
    thread_local PerParameter<at::Tensor> buffers;
    if (auto* buffer = buffers.find(param)) return *buffer;
    return buffers.add(param, at::empty(param.sizes(), param.options().dtype(at::kBFloat16)));
}

Bf16Copies& bf16_copies() {
    static Bf16Copies copies;
    return copies;
}

// The dense stack under bf16 autocast as one autograd node: the same operators
// autocast runs for nn::Linear + ReLU (addmm with bf16 input, weight and bias, a
// bf16 output; the ReLU in bf16) and, in the backward, the products autograd
// would run for them, with the weights' bf16 copies kept across micro-batches
// (Bf16Copies) and each weight's gradient added from its bf16 product straight
// into the float32 .grad (as autocast's cast backward and AccumulateGrad would,
// in two more passes). What it saves is fixed cost per micro-batch: about
// fifteen autograd nodes, three weight casts, the gradients' float32 temporaries.
class FusedDenseBf16 final : public torch::autograd::Function<FusedDenseBf16> {
public:
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input_in,
                              at::TensorList params_in, bool gradients_in_place) {
        const auto layers = static_cast<std::int64_t>(params_in.size() / 2);
        // The operators below are this node's own arithmetic: past autograd's keys.
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        auto h = input_in.to(at::kBFloat16).contiguous();
        // to_save: the input (bf16), each layer's output after its ReLU (the next
        // layer's input and the ReLU's mask), then the parameters.
        std::vector<at::Tensor> to_save{h};
        for (std::int64_t l = 0; l < layers; ++l) {
            const auto w = bf16_copies().of(params_in[2 * l]);
            const auto b = bf16_copies().of(params_in[2 * l + 1]);
            h = at::addmm(b, h, w.t());
            if (l + 1 < layers) {
                h = at::relu(h);
                to_save.push_back(h);
            }
        }
        to_save.insert(to_save.end(), params_in.begin(), params_in.end());
        ctx->save_for_backward(to_save);
        ctx->saved_data["in_place"] = gradients_in_place;
        ctx->saved_data["input_float"] = input_in.scalar_type() == at::kFloat;
        return h;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const auto layers = static_cast<std::int64_t>(saved.size()) / 3; // 1 + (layers - 1) + 2 · layers
        const bool in_place = ctx->saved_data["in_place"].toBool();
        const auto& input = saved[0];
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        auto g = grads[0].to(at::kBFloat16).contiguous();
        torch::autograd::variable_list grads_out(2 + 2 * layers);
        bool input_needs_grad = ctx->needs_input_grad(0);
        for (auto l = layers - 1; l >= 0; --l) {
            const auto& x = l == 0 ? input : saved[l]; // this layer's input (bf16)
            const auto& w_param = saved[layers + 2 * l];
            const auto& b_param = saved[layers + 2 * l + 1];
            if (w_param.requires_grad())
                add_gradient(w_param, at::mm_out(product_buffer(w_param), g.t(), x), in_place, grads_out[1 + 2 * l]);
            if (b_param.requires_grad())
                add_gradient(b_param, at::sum_out(product_buffer(b_param), g, 0), in_place, grads_out[2 + 2 * l]);
            if (l == 0 && !input_needs_grad) break;
            auto dx = at::mm(g, bf16_copies().of(w_param));
            if (l > 0) dx = at::threshold_backward(dx, x, 0); // the ReLU below this layer
            g = dx;
        }
        if (input_needs_grad) grads_out[0] = ctx->saved_data["input_float"].toBool() ? g.to(at::kFloat) : g;
        return grads_out;
    }

private:
    // A parameter's gradient from its bf16 product: added into .grad where the
    // call asked for that and autograd would only add it there (gradient_of),
    // else returned in float32 for autograd to accumulate.
    static void add_gradient(const at::Tensor& param, const at::Tensor& product, bool in_place, at::Tensor& returned) {
        auto target = gradient_of(param, in_place, returned);
        if (target.tensor.is_same(param.grad())) forget_gradient_notes(); // written in place, never noted
        if (!target.accumulate) {
            target.tensor.copy_(product);
        } else if (target.tensor.is_contiguous() && product.is_contiguous() &&
                   target.tensor.numel() == product.numel()) {
            // float32 += bf16 in one pass: add_ would first copy the bf16 product
            // into a float32 temporary (TensorIterator's common dtype), which at
            // micro-batches of 16 cost more than the products themselves.
            auto* dst = target.tensor.data_ptr<float>();
            const auto* src = product.data_ptr<at::BFloat16>();
            const auto n = target.tensor.numel();
            for (std::int64_t i = 0; i < n; ++i) dst[i] += static_cast<float>(src[i]);
        } else {
            target.tensor.add_(product);
        }
    }
};

} // namespace

bool fused_dense_available(const at::Tensor& input, const std::vector<at::Tensor>& params) {
    if (input.dim() != 2 || !input.device().is_cpu() || input.scalar_type() != at::kFloat) return false;
    return std::all_of(params.begin(), params.end(),
                       [](const at::Tensor& p) { return p.device().is_cpu() && p.scalar_type() == at::kFloat; });
}

at::Tensor fused_dense(const at::Tensor& input, const std::vector<at::Tensor>& params, bool gradients_in_place) {
    return FusedDense::apply(input, at::TensorList(params), gradients_in_place);
}

void dense_weights_changed() { ++weights_generation; }

at::Tensor fused_dense_bf16(const at::Tensor& input, const std::vector<at::Tensor>& params,
                            bool gradients_in_place) {
    return FusedDenseBf16::apply(input, at::TensorList(params), gradients_in_place);
}

void arm_gradient_notes(bool armed) {
    std::lock_guard<std::mutex> lock(notes_mutex);
    if (armed) ++notes_generation;
    notes_armed = armed;
}

double noted_gradient_squares(const at::Tensor& param) {
    const auto& grad = param.grad();
    if (!grad.defined()) return -1.0;
    std::lock_guard<std::mutex> lock(notes_mutex);
    const auto* note = notes.find(param);
    if (note == nullptr || note->generation != notes_generation || note->grad != grad.unsafeGetTensorImpl() ||
        note->version != static_cast<std::int64_t>(grad._version()))
        return -1.0;
    return note->squares;
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
