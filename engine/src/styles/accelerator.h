#pragma once
// An Accelerate-style Accelerator for one process, mirroring Hugging Face
// Accelerate's behaviour (accelerator.py, optimizer.py, scheduler.py,
// data_loader.py):
//  - accumulate(model) sets sync_gradients = (step % K == 0), or true on the
//    last batch of a prepared loader, and then resets the counter, so windows
//    realign every epoch;
//  - backward(loss) divides by K, also in a partial last window;
//  - the prepared optimizer's step()/zero_grad() do nothing while not syncing;
//    a step it skips (a non-finite window, as with an overflowed GradScaler)
//    sets step_was_skipped;
//  - the prepared scheduler advances only on sync, and not after a skipped step;
//  - the prepared loader reads one batch ahead to know it is at the end;
//  - with several processes, prepare() wraps the model in DistributedDataParallel
//    and accumulate() enters its no_sync() on every micro-batch that does not
//    sync (unless sync_each_batch), so the gradients are averaged across the
//    processes once per window.
//  - with mixed_precision the prepared model's forward runs under autocast, and
//    with a loss scaler backward() scales the loss, clip_grad_norm_ unscales the
//    gradients first, and the prepared optimizer's step() is scaler.step() and
//    scaler.update() (an overflow skips the step: step_was_skipped).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "accum/run_config.h"
#include "data/batch.h"
#include "distributed/data_parallel.h"
#include "memory/out_of_memory.h" // find_executable_batch_size, as accelerate.utils has it
#include "models/model.h"

namespace accum {

class DataLoader;
class LossScaler;
class LrScheduler;
class Optimizer;

struct GradientState {
    std::int64_t num_steps = 1;      // gradient_accumulation_steps
    std::int64_t step = 0;           // micro-batches since the last sync
    bool sync_gradients = true;
    bool end_of_dataloader = false;
    // GradientAccumulationPlugin(sync_each_batch=True): all-reduce after every
    // micro-batch instead of once per window (the pitfall, K times the traffic).
    bool sync_each_batch = false;
    double last_grad_norm = 0.0;     // what the last clip_grad_norm_ measured
    // The engine's check before a sync step (styles/accelerator.cpp): false skips it.
    std::function<bool(double grad_norm)> may_step;
};

// The model as prepare() returns it: Accelerate wraps model.forward so that it
// runs under autocast(mixed_precision).
class PreparedModel {
public:
    PreparedModel(Model& model, torch::Device device, MixedPrecision mixed_precision)
        : ddp_(model), device_(device), mixed_precision_(mixed_precision) {}
    ModelOutput operator()(const Batch& batch); // with autocast: DistributedDataParallel(model)(batch)
    void train(bool on = true) { ddp_.train(on); }
    std::vector<torch::Tensor> parameters() const { return ddp_.parameters(); }
    dist::DistributedDataParallel& ddp() { return ddp_; } // what accumulate()'s no_sync() acts on

private:
    dist::DistributedDataParallel ddp_; // only forwards in a run of one process
    torch::Device device_;
    MixedPrecision mixed_precision_;
};

class AcceleratedOptimizer {
public:
    AcceleratedOptimizer(Optimizer& optimizer, GradientState& state, LossScaler& scaler)
        : optimizer_(optimizer), state_(state), scaler_(scaler) {}
    // Only when sync_gradients (and the window is finite): scaler.step(optimizer)
    // then scaler.update() (a scaler that is off just steps the optimizer).
    void step();
    void zero_grad(); // optimizer.zero_grad() only when sync_gradients
    bool step_was_skipped() const { return step_was_skipped_; }
    Optimizer& wrapped() { return optimizer_; }

private:
    Optimizer& optimizer_;
    GradientState& state_;
    LossScaler& scaler_;
    bool step_was_skipped_ = false;
};

class AcceleratedScheduler {
public:
    AcceleratedScheduler(LrScheduler& scheduler, AcceleratedOptimizer& optimizer, GradientState& state)
        : scheduler_(scheduler), optimizer_(optimizer), state_(state) {}
    void step(); // advances only when sync_gradients, and not after a skipped optimizer step

private:
    LrScheduler& scheduler_;
    AcceleratedOptimizer& optimizer_;
    GradientState& state_;
};

// Iterates a DataLoader one batch ahead; marks end_of_dataloader before it
// yields the last batch. Batches arrive on the accelerator's device.
class PreparedDataLoader {
public:
    PreparedDataLoader(DataLoader& loader, GradientState& state, torch::Device device)
        : loader_(loader), state_(state), device_(device) {}
    void set_epoch(std::int64_t epoch); // the epoch's shuffle, as the sampler's set_epoch

    class Iterator {
    public:
        Iterator(PreparedDataLoader* owner, std::int64_t index);
        const Batch& operator*() const { return current_; }
        Iterator& operator++();
        bool operator!=(const Iterator& other) const { return index_ != other.index_; }
        std::int64_t index() const { return index_; }

    private:
        void fetch();
        PreparedDataLoader* owner_;
        std::int64_t index_;
        Batch current_;
        std::optional<Batch> next_;
    };

    Iterator begin();
    Iterator end();
    std::int64_t size() const;
    // Label items (samples, or tokens) in batches [first, last).
    std::int64_t items_in(std::int64_t first, std::int64_t last) const;
    // accelerator.skip_first_batches(): start the next iteration at `n` (resume).
    void skip_first_batches(std::int64_t n) { skip_ = n; }

private:
    friend class Iterator;
    DataLoader& loader_;
    GradientState& state_;
    torch::Device device_;
    std::int64_t skip_ = 0;
};

class Accelerator {
public:
    // `scaler`: the loss scaler backward(), clip_grad_norm_ and the prepared
    // optimizer use (Accelerate makes its own GradScaler for fp16; here the run's,
    // which its checkpoints keep); none: an own one that is off (no loss scaling).
    explicit Accelerator(std::int64_t gradient_accumulation_steps, torch::Device device = torch::kCPU,
                         MixedPrecision mixed_precision = MixedPrecision::No, LossScaler* scaler = nullptr);
    ~Accelerator();

    // The prepared objects refer to each other, so they never move: prepare()
    // returns them as a prvalue (bind it, as `auto [model, optimizer, …] = …`).
    struct Prepared {
        Prepared(Model& m, Optimizer& o, DataLoader& d, LrScheduler& s, GradientState& state, torch::Device device,
                 MixedPrecision mixed_precision, LossScaler& scaler)
            : model(m, device, mixed_precision), optimizer(o, state, scaler), train_dataloader(d, state, device),
              lr_scheduler(s, optimizer, state) {}
        Prepared(const Prepared&) = delete;
        Prepared& operator=(const Prepared&) = delete;
        PreparedModel model;
        AcceleratedOptimizer optimizer;
        PreparedDataLoader train_dataloader;
        AcceleratedScheduler lr_scheduler;
    };
    Prepared prepare(Model& model, Optimizer& optimizer, DataLoader& loader, LrScheduler& scheduler);

    // with accelerator.accumulate(model): — an RAII scope per micro-batch, in
    // no_sync() unless the gradients sync at its end.
    class AccumulateScope {
    public:
        // A model not wrapped for several processes (a plain module, a tensor): nothing to skip.
        explicit AccumulateScope(Accelerator& accelerator) : no_sync_(enter(accelerator, nullptr)) {}
        AccumulateScope(Accelerator& accelerator, dist::DistributedDataParallel& model)
            : no_sync_(enter(accelerator, &model)) {}
        ~AccumulateScope() = default;
        AccumulateScope(const AccumulateScope&) = delete;
        AccumulateScope& operator=(const AccumulateScope&) = delete;

    private:
        static dist::NoSync enter(Accelerator& accelerator, dist::DistributedDataParallel* model);
        dist::NoSync no_sync_;
    };
    [[nodiscard]] AccumulateScope accumulate(PreparedModel& model) { return AccumulateScope(*this, model.ddp()); }
    template <typename M>
    [[nodiscard]] AccumulateScope accumulate(M& /*model*/) {
        return AccumulateScope(*this);
    }

    void backward(const torch::Tensor& loss); // loss / K, then backward (of scaler.scale(loss / K))
    bool sync_gradients() const { return gradient_state.sync_gradients; }
    std::int64_t gradient_accumulation_steps() const { return gradient_state.num_steps; }
    int num_processes() const;
    // unscale_gradients(), then torch.nn.utils.clip_grad_norm_.
    double clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm);
    // scaler.unscale_(optimizer) for each prepared optimizer (nothing when the scaler is off).
    void unscale_gradients();
    const torch::Device& device() const { return device_; }
    LossScaler& scaler() { return scaler_; } // accelerator.scaler (off without loss scaling)

    GradientState gradient_state;

private:
    void do_sync();
    torch::Device device_;
    MixedPrecision mixed_precision_;
    std::unique_ptr<LossScaler> own_scaler_; // when none was given
    LossScaler& scaler_;
    std::vector<Optimizer*> optimizers_; // prepared
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
