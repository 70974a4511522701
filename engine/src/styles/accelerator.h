#pragma once
// An Accelerate-style Accelerator for one process, mirroring Hugging Face
// Accelerate's behaviour (accelerator.py, optimizer.py, scheduler.py,
// data_loader.py):
//  - accumulate(model) sets sync_gradients = (step % K == 0), or true on the
//    last batch of a prepared loader, and then resets the counter, so windows
//    realign every epoch;
//  - backward(loss) divides by K, also in a partial last window;
//  - the prepared optimizer's step()/zero_grad() do nothing while not syncing;
//  - the prepared scheduler advances only on sync;
//  - the prepared loader reads one batch ahead to know it is at the end.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "data/batch.h"
#include "memory/out_of_memory.h" // find_executable_batch_size, as accelerate.utils has it

namespace torch::optim {
class Optimizer;
}

namespace accum {

class DataLoader;
class LrScheduler;
class Model;

struct GradientState {
    std::int64_t num_steps = 1;      // gradient_accumulation_steps
    std::int64_t step = 0;           // micro-batches since the last sync
    bool sync_gradients = true;
    bool end_of_dataloader = false;
};

class AcceleratedOptimizer {
public:
    AcceleratedOptimizer(torch::optim::Optimizer& optimizer, GradientState& state) : optimizer_(optimizer), state_(state) {}
    void step();      // optimizer.step() only when sync_gradients
    void zero_grad(); // optimizer.zero_grad() only when sync_gradients
    torch::optim::Optimizer& wrapped() { return optimizer_; }

private:
    torch::optim::Optimizer& optimizer_;
    GradientState& state_;
};

class AcceleratedScheduler {
public:
    AcceleratedScheduler(LrScheduler& scheduler, GradientState& state) : scheduler_(scheduler), state_(state) {}
    void step(); // advances only when sync_gradients

private:
    LrScheduler& scheduler_;
    GradientState& state_;
};

// Iterates a DataLoader one batch ahead; marks end_of_dataloader before it
// yields the last batch. Batches arrive on the accelerator's device.
class PreparedDataLoader {
public:
    PreparedDataLoader(DataLoader& loader, GradientState& state, torch::Device device)
        : loader_(loader), state_(state), device_(device) {}

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
    explicit Accelerator(std::int64_t gradient_accumulation_steps, torch::Device device = torch::kCPU);

    struct Prepared {
        Model& model;
        AcceleratedOptimizer optimizer;
        PreparedDataLoader train_dataloader;
        AcceleratedScheduler lr_scheduler;
    };
    Prepared prepare(Model& model, torch::optim::Optimizer& optimizer, DataLoader& loader, LrScheduler& scheduler);

    // with accelerator.accumulate(model): — an RAII scope per micro-batch.
    class AccumulateScope {
    public:
        explicit AccumulateScope(Accelerator& accelerator);
        ~AccumulateScope() = default;
        AccumulateScope(const AccumulateScope&) = delete;
        AccumulateScope& operator=(const AccumulateScope&) = delete;
    };
    template <typename M>
    [[nodiscard]] AccumulateScope accumulate(M& /*model*/) {
        return AccumulateScope(*this);
    }

    void backward(const torch::Tensor& loss); // loss / K, then backward
    bool sync_gradients() const { return gradient_state.sync_gradients; }
    std::int64_t gradient_accumulation_steps() const { return gradient_state.num_steps; }
    double clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm);
    const torch::Device& device() const { return device_; }

    GradientState gradient_state;

private:
    void do_sync();
    torch::Device device_;
};

} // namespace accum
