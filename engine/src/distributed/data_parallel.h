// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// DistributedDataParallel for the engine's models, after
// torch/nn/parallel/distributed.py, as the three styles' loops use it (the
// pattern is in pytorch_loop.cpp's comment).

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "data/batch.h"
#include "distributed/gradient_sync.h"
#include "distributed/process_group.h"
#include "models/model.h"

namespace accum::dist {

// What one micro-batch brings to its window's loss, kept from its forward for
// the sync at the end of its backward.
struct MicroBatchPart {
    torch::Tensor loss;     // mean over label items (detached)
    torch::Tensor loss_sum; // sum over label items (detached)
    std::int64_t items = 0; // label items
};

// Values that ride with every gradient all-reduce, summed over the ranks
// (RankAgreement's: the window's loss, stop and pause, memory figures).
class SyncPassenger {
public:
    virtual ~SyncPassenger() = default;
    // Before the all-reduce that ends the backward of the micro-batch `current`.
    virtual std::vector<float> board(const MicroBatchPart& current) = 0;
    // After it, with the sums over the ranks of what every rank boarded.
    virtual void alight(const std::vector<float>& sums) = 0;
};

// A data-parallel run's process group and its gradient buckets, for one run.
class DistributedState {
public:
    explicit DistributedState(std::unique_ptr<ProcessGroup> group) : group_(std::move(group)), sync_(*group_) {}
    DistributedState(const DistributedState&) = delete;
    DistributedState& operator=(const DistributedState&) = delete;

    ProcessGroup& group() { return *group_; }
    GradientSync& gradients() { return sync_; }
    int rank() const { return group_->rank(); }
    int world_size() const { return group_->world_size(); }

    void set_passenger(SyncPassenger* passenger) { passenger_ = passenger; }
    // The sync at the end of a backward: `parameters`' .grad averaged over the
    // ranks, the passenger's values summed, in one all-reduce (per bucket).
    void synchronize(const std::vector<torch::Tensor>& parameters, const MicroBatchPart& current);

private:
    std::unique_ptr<ProcessGroup> group_;
    GradientSync sync_;
    SyncPassenger* passenger_ = nullptr;
};

// This thread's run's state (torch.distributed's default group; Accelerate's
// PartialState); null when the run has one process.
DistributedState* default_state();
// Makes `state` the default for the scope (the session, around a run).
class DefaultStateScope {
public:
    explicit DefaultStateScope(DistributedState* state);
    ~DefaultStateScope();
    DefaultStateScope(const DefaultStateScope&) = delete;
    DefaultStateScope& operator=(const DefaultStateScope&) = delete;

private:
    DistributedState* previous_;
};

// with model.no_sync(): — an RAII scope that clears the model's
// require_backward_grad_sync and restores it; a default-constructed one
// (nullcontext()) changes nothing.
class NoSync {
public:
    NoSync() = default;
    explicit NoSync(bool& require_sync) : flag_(&require_sync), previous_(std::exchange(require_sync, false)) {}
    NoSync(const NoSync&) = delete; // returned as a prvalue only: no copy, no move
    ~NoSync() {
        if (flag_) *flag_ = previous_;
    }

private:
    bool* flag_ = nullptr;
    bool previous_ = true;
};

// contextlib.nullcontext(): the other branch of `sync ? nullcontext() : model.no_sync()`.
inline NoSync nullcontext() { return NoSync(); }

class DistributedDataParallel {
public:
    // The module's gradients are averaged over this thread's default group's
    // ranks; without one (one process) this only forwards.
    explicit DistributedDataParallel(Model& module);

    // outputs = model(batch): the module's forward. Outside no_sync(), with
    // gradients enabled and several ranks, its backward ends with the sync.
    ModelOutput operator()(const Batch& batch);
    // Backward passes of forwards made in this scope keep their gradients local.
    [[nodiscard]] NoSync no_sync() { return NoSync(require_backward_grad_sync); }

    void train(bool on = true) { module.train(on); }
    std::vector<torch::Tensor> parameters() const { return module.parameters(); }
    void zero_grad() { module.zero_grad(); }

    Model& module;
    // DDP's flag: false inside no_sync().
    bool require_backward_grad_sync = true;

private:
    DistributedState* state_;
};

} // namespace accum::dist
