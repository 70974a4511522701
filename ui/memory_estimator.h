#pragma once
// The studio's memory estimate (accum::estimate_run_memory) on a worker thread of
// its own: request() is debounced (the fields of a form change a few times a
// second while someone types), each request cancels the estimate under way, and
// only the latest request's result is delivered, on the GUI thread. An estimate
// never overlaps a run of the engine (the engine sees to it: an estimate that
// meets a run comes back busy, and a run waits for an estimate to stop).

#include <QObject>
#include <QTimer>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "accum/run_config.h"
#include "accum/run_estimate.h"

namespace studio {

class MemoryEstimator : public QObject {
    Q_OBJECT
public:
    explicit MemoryEstimator(QObject* parent = nullptr, int debounce_ms = 400);
    ~MemoryEstimator() override;

    // Estimates `config` once no further request came for the debounce time.
    void request(const accum::RunConfig& config);
    // Drops the pending and the running request (nothing is delivered for them).
    void cancel();
    // A request is waiting or being estimated.
    bool is_pending() const { return pending_; }
    // Estimates started (for tests: each request cancels the one before).
    int started_count() const { return started_.load(); }

Q_SIGNALS:
    void estimating();
    void estimated(const accum::RunMemoryEstimate& estimate);

private:
    void dispatch();
    void work();

    QTimer debounce_;
    accum::RunConfig requested_;
    bool pending_ = false;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> started_{0};
    std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<std::pair<accum::RunConfig, std::uint64_t>> job_;
    bool quit_ = false;
    std::thread thread_;
};

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
