#include "memory/estimate_guard.h"

#include <atomic>
#include <mutex>

namespace accum::memory {

namespace {
std::mutex g_slot;          // guards g_holder
std::string g_holder;       // what holds the run slot; empty when it is free
std::atomic<bool> g_running{false};
std::mutex g_estimate;      // held by an estimate for its whole length
} // namespace

std::unique_ptr<RunSlot> RunSlot::claim(const std::string& what, std::string* holder) {
    {
        const std::lock_guard<std::mutex> lock(g_slot);
        if (!g_holder.empty()) {
            if (holder) *holder = g_holder;
            return nullptr;
        }
        g_holder = what.empty() ? std::string("a run") : what;
        g_running = true;
    }
    // An estimate under way sees g_running at its next check and stops; wait for it.
    const std::lock_guard<std::mutex> wait_for_estimate(g_estimate);
    return std::unique_ptr<RunSlot>(new RunSlot());
}

RunSlot::~RunSlot() {
    const std::lock_guard<std::mutex> lock(g_slot);
    g_holder.clear();
    g_running = false;
}

EstimateInProgress::EstimateInProgress() { g_estimate.lock(); }
EstimateInProgress::~EstimateInProgress() { g_estimate.unlock(); }
bool EstimateInProgress::run_elsewhere() const { return g_running.load(); }

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
