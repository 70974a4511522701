// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The process's one watchdog (ARCHITECTURE.md §4.5): a thread that bounds the
// waits nobody else can end (watch()) and releases what a failed group holds
// (dispose()) on threads it owns and joins, so that the caller's thread never
// blocks past its deadline and no thread is left to itself. At the end of the
// process the disposals still running are waited for at most 2 s; one still
// busy then (Gloo waiting on a silent peer) ends with the process.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>

namespace accum::dist {

class Watchdog {
public:
    using Clock = std::chrono::steady_clock;
    struct State;
    struct Entry {
        State* state;
        Clock::time_point deadline;
        std::function<bool()> cancelled;
        std::function<void()> action;
        Clock::time_point next{};
        std::atomic<bool> fired{false}; // the action ran: the wait was cut
    };
    // Ends a watch: its action runs no more once this returns.
    struct EndWatch {
        void operator()(Entry* entry) const;
    };
    using Watch = std::unique_ptr<Entry, EndWatch>;

    // `action` runs on the watchdog's thread once `deadline` has passed or
    // `cancelled` says so (looked at every 10 ms, on that thread: it must be
    // thread-safe), then every 50 ms (c10d may connect again), until the Watch ends.
    Watch watch(Clock::time_point deadline, std::function<bool()> cancelled, std::function<void()> action);
    Watch watch(Clock::time_point deadline, std::stop_token token, std::function<void()> action) {
        return watch(deadline, [token] { return token.stop_requested(); }, std::move(action));
    }
    // `work` (what a failed group holds, destroyed) on a thread of its own,
    // joined by the watchdog once done. Runs it here when no thread can start.
    void dispose(std::function<void()> work);

private:
    friend Watchdog& watchdog();
    Watchdog();
    std::shared_ptr<State> state_;
};

// The process's one Watchdog (started on its first use).
Watchdog& watchdog();

} // namespace accum::dist
