#pragma once
// A CPU allocator that counts tensor memory and can enforce a budget, so that
// a laptop without a GPU runs out of memory the way a full GPU does.
//
// Installed once per process with c10::SetCPUAllocator, wrapping the allocator
// that was there. Only allocations made on a thread that is "counting" (the
// engine thread while a run trains) are counted and limited: the data set held
// in host memory is not, just as it would not be on a GPU.

#include <cstdint>

namespace accum::memory {

// Installs the counting allocator (idempotent, thread-safe).
void install_counting_allocator();

// Freed tensor blocks of 1 MiB or more are kept (up to 1 GiB) for the next
// allocation of the same size; release_cached_blocks() frees them (the session
// does at the end of each run). cached_block_bytes(): the bytes kept now. Off in
// AddressSanitizer builds (block_cache_enabled() false), which must see every free.
void release_cached_blocks();
std::int64_t cached_block_bytes();
bool block_cache_enabled();

// Counting applies to allocations made on the calling thread while a guard lives.
class CountingScope {
public:
    CountingScope();
    ~CountingScope();
    CountingScope(const CountingScope&) = delete;
    CountingScope& operator=(const CountingScope&) = delete;

private:
    bool previous_;
};

struct CpuCounters {
    std::int64_t current = 0;     // bytes of counted tensor memory alive now
    std::int64_t peak = 0;        // peak since reset_run_peak()
    std::int64_t window_peak = 0; // peak since reset_window_peak()
    std::int64_t budget = 0;      // 0 = none
};

// The last allocation the budget refused since reset_run_peak() (0: none), and
// the bytes in use when it was asked for: read after an out-of-memory error.
struct DeniedAllocation {
    std::int64_t bytes = 0;
    std::int64_t in_use = 0;
};

CpuCounters cpu_counters(); // lock-free: read on every step
DeniedAllocation last_denied_allocation();
void set_cpu_budget(std::int64_t bytes); // 0 = none
void reset_run_peak();
void reset_window_peak();

// Resident set size of this process, from /proc/self/statm (0 if unknown).
std::int64_t process_rss_bytes();

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
