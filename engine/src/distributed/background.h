// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Threads that finish, off their caller's thread, work nobody waits for: a
// join its caller gave up, the destruction of a group that failed. Each is
// detached and counted; each ends within a bound of its own (a join within
// moments of being cancelled, or Gloo's timeout while Gloo connects; a failed
// group once Gloo's threads have given up on their peers, within the
// timeout). At the end of the process the count is waited for, at most
// kExitWait: a thread still busy then (Gloo waiting on a silent peer) is left
// to the process's end, which reclaims what it holds.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace accum::dist {

class Background {
public:
    // Runs `work` on a thread of its own; what `work` holds is destroyed there
    // too. Throws std::system_error when no thread can be started.
    void start(std::function<void()> work) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++running_;
        }
        try {
            std::thread([this, work = std::move(work)]() mutable {
                try {
                    work();
                } catch (...) {
                    // Nobody waits for it: what failed was given up already.
                }
                work = nullptr; // its captures (a backend, a store) end here, not at the count's release
                {
                    std::lock_guard<std::mutex> lock(mutex_);
                    --running_;
                }
                idle_.notify_all();
            }).detach();
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            --running_;
            throw;
        }
    }
    bool wait_idle(std::chrono::milliseconds limit) {
        std::unique_lock<std::mutex> lock(mutex_);
        return idle_.wait_for(lock, limit, [&] { return running_ == 0; });
    }

private:
    std::mutex mutex_;
    std::condition_variable idle_;
    int running_ = 0;
};

// The process's one Background (background.cpp).
Background& background();

} // namespace accum::dist
