// SPDX-License-Identifier: GPL-3.0-or-later
#include "distributed/watchdog.h"

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

namespace accum::dist {

constexpr auto kRepeat = std::chrono::milliseconds(50);
constexpr auto kLook = std::chrono::milliseconds(10); // how often tokens are looked at while a watch runs
constexpr auto kExitWait = std::chrono::seconds(2);

struct Watchdog::State {
    std::mutex mutex;
    std::condition_variable cv;
    std::list<Entry*> entries;
    struct Disposal {
        std::jthread thread; // joined as the disposal is erased, once done
        bool done = false;
    };
    std::list<Disposal> disposals;
    bool stop = false;
    std::thread thread{[this] { run(); }}; // last: it starts once the rest is in place

    // The watchdog's thread: actions run under the mutex, so that a Watch
    // that ends waits for its action to be over.
    void run() {
        std::unique_lock<std::mutex> lock(mutex);
        while (!stop) {
            const auto now = Clock::now();
            for (auto& e : entries) {
                if (now < e->next) continue;
                try {
                    if (now < e->deadline && !e->cancelled()) continue;
                    e->fired = true;
                    e->next = now + kRepeat;
                    e->action();
                } catch (...) {
                    // A look or an action that fails leaves the wait to its own bound.
                }
            }
            // The wait at exit looks at the count.
            if (disposals.remove_if([](const Disposal& d) { return d.done; }) > 0) cv.notify_all();
            if (entries.empty()) cv.wait(lock);
            else cv.wait_for(lock, kLook);
        }
    }
};

Watchdog::Watchdog() : state_(std::make_shared<State>()) {}

void Watchdog::EndWatch::operator()(Entry* entry) const {
    {
        std::lock_guard<std::mutex> lock(entry->state->mutex);
        entry->state->entries.remove(entry);
    }
    delete entry;
}

Watchdog::Watch Watchdog::watch(Clock::time_point deadline, std::function<bool()> cancelled,
                                std::function<void()> action) {
    Watch entry(new Entry{state_.get(), deadline, std::move(cancelled), std::move(action)});
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->entries.push_back(entry.get());
    }
    state_->cv.notify_all();
    return entry;
}

void Watchdog::dispose(std::function<void()> work) {
    auto* state = state_.get();
    // Shared, so that a thread that cannot be started leaves the work here to run.
    auto held = std::make_shared<std::function<void()>>(std::move(work));
    const auto run = [held] {
        try {
            (*held)();
        } catch (...) {
            // Nobody waits for it: what failed was given up already.
        }
        *held = nullptr; // what it held (a backend, a store) ends here
    };
    std::unique_lock<std::mutex> lock(state->mutex);
    auto& disposal = state->disposals.emplace_back();
    try {
        disposal.thread = std::jthread([state, &disposal, run] {
            run();
            {
                std::lock_guard<std::mutex> lock(state->mutex);
                disposal.done = true;
            }
            state->cv.notify_all();
        });
    } catch (const std::system_error&) {
        state->disposals.pop_back();
        lock.unlock();
        run(); // no thread to be had: released on the caller's thread
    }
}

// Never destroyed: a disposal still busy at the end of the process counts
// itself out through it. The first use registers the wait at exit, after
// LibTorch's own statics, so that it runs before they are destroyed.
Watchdog& watchdog() {
    static Watchdog* dog = new Watchdog;
    struct WaitAtExit {
        ~WaitAtExit() {
            auto& s = *dog->state_;
            std::unique_lock<std::mutex> lock(s.mutex);
            const bool idle = s.cv.wait_for(lock, kExitWait, [&] { return s.disposals.empty(); });
            if (!idle) return; // left to the process's end
            s.stop = true;
            lock.unlock();
            s.cv.notify_all();
            s.thread.join();
        }
    };
    static WaitAtExit wait_at_exit;
    return *dog;
}

} // namespace accum::dist
