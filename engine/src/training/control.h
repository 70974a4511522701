#pragma once
// Stop / pause / single-step requests from another thread, polled by the run.
//
// Every change to a value that proceed()'s wait reads (stop_, paused_, tokens_)
// is made under mutex_ before the notify: a change made without it can fall
// between the waiter's check of the predicate and its going to sleep, and the
// notify is then lost (a stop that never reaches a paused run). The atomics stay
// for the readers that take no lock (stop_requested(), paused(), proceed()'s
// fast path).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace accum {

class RunControl {
public:
    void request_stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!stop_.load()) stop_at_.store(std::chrono::steady_clock::now().time_since_epoch().count());
            stop_.store(true);
        }
        cv_.notify_all();
    }
    // How long ago the stop was requested (zero when it was not).
    std::chrono::steady_clock::duration stop_requested_for() const {
        if (!stop_.load()) return {};
        return std::chrono::steady_clock::now().time_since_epoch() -
               std::chrono::steady_clock::duration(stop_at_.load());
    }
    void pause() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            paused_.store(true);
        }
        cv_.notify_all();
    }
    void resume() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            paused_.store(false);
        }
        cv_.notify_all();
    }
    void step_once() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            tokens_.fetch_add(1);
        }
        cv_.notify_all();
    }
    bool stop_requested() const { return stop_.load(); }
    bool paused() const { return paused_.load(); }
    // How often the run has been held while paused: once each time proceed()
    // starts to wait, and once each time the ranks of a data-parallel run agree
    // again to wait together (note_held()). It only grows, and it grows only
    // while the run is held: an event for a caller that must know the run has
    // come back to a micro-batch boundary and waits there.
    std::int64_t times_held() const { return held_.load(); }
    void note_held() { held_.fetch_add(1); }
    void reset() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_.store(false);
            tokens_.store(0);
        }
        cv_.notify_all();
    }

    // While paused: takes a single step granted by step_once(), if there is one,
    // without waiting (a data-parallel run waits with its peers instead).
    bool take_step() {
        if (!paused_.load()) return false;
        std::lock_guard<std::mutex> lock(mutex_);
        if (tokens_.load() <= 0) return false;
        tokens_.fetch_sub(1);
        return true;
    }

    // Called before each micro-batch: waits while paused (unless a single step
    // was granted). Returns false when the run must stop.
    bool proceed() {
        if (stop_.load()) return false;
        if (!paused_.load()) return true;
        std::unique_lock<std::mutex> lock(mutex_);
        const auto go_on = [this] { return stop_.load() || !paused_.load() || tokens_.load() > 0; };
        if (!go_on()) {
            held_.fetch_add(1);
            cv_.wait(lock, go_on);
        }
        if (stop_.load()) return false;
        if (paused_.load() && tokens_.load() > 0) tokens_.fetch_sub(1);
        return true;
    }

private:
    std::atomic<bool> stop_{false};
    std::atomic<std::chrono::steady_clock::rep> stop_at_{0};
    std::atomic<bool> paused_{false};
    std::atomic<int> tokens_{0};
    std::atomic<std::int64_t> held_{0};
    std::mutex mutex_;
    std::condition_variable cv_;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
