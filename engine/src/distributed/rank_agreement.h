// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the ranks agree on beside their gradients (ARCHITECTURE.md 1.2), fed by
// the run through RankHooks: it knows nothing of the run's loop.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "accum/records.h"
#include "distributed/data_parallel.h"

namespace accum::dist {

// What the agreement asks of the run it serves.
struct RankHooks {
    // The window's loss so far (sum and divisor) with the micro-batch `current`
    // added, as the run will add it after the sync.
    std::function<std::pair<double, double>(const MicroBatchPart& current)> window_with;
    std::function<MemoryRecord()> memory_now; // this rank's memory figures now
    std::function<bool()> stop_requested;     // this rank's own requests
    std::function<bool()> paused;
    std::function<bool()> take_step;          // while paused: a single step granted here
    std::function<void()> while_waiting;      // every 50 ms while the ranks wait paused together
};

class RankAgreement final : public SyncPassenger {
public:
    RankAgreement(DistributedState& state, RankHooks hooks);
    ~RankAgreement() override;
    RankAgreement(const RankAgreement&) = delete;
    RankAgreement& operator=(const RankAgreement&) = delete;

    int rank() const { return state_.rank(); }
    int world_size() const { return state_.world_size(); }

    // Before training: every rank's `shared_options` (the options that must be
    // the same everywhere, as text) must agree, else ConfigError; returns
    // whether rank 0 writes checkpoints (`writes_checkpoints` is rank 0's say);
    // `model_state` (parameters and buffers) becomes rank 0's, as DDP's
    // constructor broadcasts it. From here on the agreement rides with every
    // gradient sync.
    bool join(const std::string& shared_options, bool writes_checkpoints, const std::vector<torch::Tensor>& model_state);

    // Before each micro-batch: false when the ranks agreed to stop. A pause
    // agreed holds every rank here, where they ask each other every 50 ms
    // (within any --dist-timeout) whether to go on, take one micro-batch, or stop.
    bool proceed();
    bool stop_agreed() const { return stop_agreed_; }

    // The window's loss over every rank's micro-batches, when a gradient sync
    // carried it since the window began; nothing otherwise. Starts the next window.
    std::optional<double> take_window_loss() { return std::exchange(window_loss_, std::nullopt); }

    // This rank's latest figures (sent with the next sync), and every other
    // rank's as of the last sync (rank 0 records them).
    void set_own_memory(const MemoryRecord& record);
    std::vector<MemoryRecord> other_ranks_memory() const;

    // Gradient all-reduces since the last call (a micro-step record's), and the
    // counters of the whole window (a step record's), which start afresh.
    std::int64_t allreduces_since_last_asked();
    SyncCounters take_window_counters();

    // Every rank's CPU generator state, by rank, to every rank. Every rank calls
    // it at the same checkpoint, so it is also the barrier before rank 0 saves.
    std::vector<torch::Tensor> gather_rng_states(const torch::Tensor& mine);

    std::vector<float> board(const MicroBatchPart& current) override;
    void alight(const std::vector<float>& sums) override;

private:
    DistributedState& state_;
    RankHooks hooks_;
    bool stop_agreed_ = false;
    bool pause_agreed_ = false;
    std::optional<double> window_loss_; // the ranks' window loss, since the window began
    MemoryRecord own_memory_;           // this rank's figures, refreshed at most every 200 ms
    std::chrono::steady_clock::time_point own_memory_at_{};
    std::vector<std::optional<MemoryRecord>> rank_memory_; // every rank's, as of the last sync
    std::int64_t calls_seen_ = 0;       // gradient all-reduces already reported
};

} // namespace accum::dist
