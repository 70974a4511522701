#include "memory_estimator.h"

#include <QMetaObject>

namespace studio {

MemoryEstimator::MemoryEstimator(QObject* parent, int debounce_ms) : QObject(parent) {
    debounce_.setSingleShot(true);
    debounce_.setInterval(debounce_ms);
    connect(&debounce_, &QTimer::timeout, this, &MemoryEstimator::dispatch);
    thread_ = std::thread([this] { work(); });
}

MemoryEstimator::~MemoryEstimator() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        quit_ = true;
        ++generation_; // the estimate under way stops at its next check
    }
    wake_.notify_all();
    thread_.join();
}

void MemoryEstimator::request(const accum::RunConfig& config) {
    requested_ = config;
    pending_ = true;
    ++generation_; // cancels the estimate under way
    debounce_.start();
}

void MemoryEstimator::cancel() {
    debounce_.stop();
    pending_ = false;
    const std::lock_guard<std::mutex> lock(mutex_);
    job_.reset();
    ++generation_;
}

void MemoryEstimator::dispatch() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        job_ = std::pair{requested_, generation_.load()};
    }
    wake_.notify_all();
    Q_EMIT estimating();
}

void MemoryEstimator::work() {
    for (;;) {
        std::pair<accum::RunConfig, std::uint64_t> job;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [this] { return quit_ || job_.has_value(); });
            if (quit_) return;
            job = *job_;
            job_.reset();
        }
        const auto generation = job.second;
        if (generation != generation_.load()) continue;
        ++started_;
        auto estimate = accum::estimate_run_memory(job.first, [this, generation] {
            return generation != generation_.load();
        });
        // Delivered on the GUI thread (dropped there if this object is gone), and
        // only if no request came since.
        QMetaObject::invokeMethod(
            this,
            [this, generation, estimate = std::move(estimate)] {
                if (generation != generation_.load()) return;
                pending_ = false;
                Q_EMIT estimated(estimate);
            },
            Qt::QueuedConnection);
    }
}

} // namespace studio
// SPDX-License-Identifier: GPL-3.0-or-later
