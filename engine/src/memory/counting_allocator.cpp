#include "memory/counting_allocator.h"

#include <atomic>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include "torch_compat.h"

#include "accum/run_config.h"

namespace accum::memory {

namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_window_peak{0};
std::atomic<std::int64_t> g_budget{0};
thread_local bool t_counting = false;
// The last allocation the budget refused since reset_run_peak(), and the bytes
// in use then (for the out-of-memory summary). Off the hot path: only on refusal.
std::mutex g_refusal_mutex;
std::int64_t g_denied_bytes = 0;
std::int64_t g_denied_in_use = 0;

void raise_to(std::atomic<std::int64_t>& peak, std::int64_t value) {
    std::int64_t seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
}

// Every block carries a small header in front of the data: the byte count and
// whether it was counted. The data pointer is also the context, as oneDNN's
// raw_allocate()/raw_deallocate() require.
constexpr std::size_t kHeader = 64; // keeps the data 64-byte aligned
struct Header {
    std::int64_t bytes;
    std::int64_t counted;
};
c10::Allocator* g_inner = nullptr;
c10::DeleterFnPtr g_inner_deleter = nullptr;

// Freed blocks of kCachedFrom bytes or more wait here for the next allocation of
// the same size instead of going back to malloc: every micro-batch frees its
// activations and allocates the same sizes again. On any thread but the main one
// (the studio's engine thread) glibc serves such blocks from per-thread heaps of
// limited size, which it unmaps and maps again as they empty and fill, so every
// micro-batch page-faulted all of its activations back in (the cost measured:
// bench/MANUAL_FIGURES.md). At most kCacheLimit bytes wait;
// release_cached_blocks() hands them back. Off under AddressSanitizer, which must
// see every free.
#if defined(__SANITIZE_ADDRESS__)
#define ACCUM_BLOCK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ACCUM_BLOCK_CACHE 0
#endif
#endif
#ifndef ACCUM_BLOCK_CACHE
#define ACCUM_BLOCK_CACHE 1
#endif
constexpr std::int64_t kCachedFrom = std::int64_t{1} << 20;
constexpr std::int64_t kCacheLimit = std::int64_t{1} << 30;

class BlockCache {
public:
    // A block for `bytes` bytes of data (header included in the block), or nullptr.
    void* take(std::int64_t bytes) {
        if (!ACCUM_BLOCK_CACHE || bytes < kCachedFrom) return nullptr;
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto found = blocks_.find(bytes);
        if (found == blocks_.end() || found->second.empty()) return nullptr;
        void* base = found->second.back();
        found->second.pop_back();
        held_ -= bytes;
        return base;
    }
    // Keeps the block when it is large enough and there is room; false otherwise.
    bool keep(void* base, std::int64_t bytes) {
        if (!ACCUM_BLOCK_CACHE || bytes < kCachedFrom) return false;
        const std::lock_guard<std::mutex> lock(mutex_);
        if (held_ + bytes > kCacheLimit) return false;
        blocks_[bytes].push_back(base);
        held_ += bytes;
        return true;
    }
    void release() {
        std::unordered_map<std::int64_t, std::vector<void*>> blocks;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            blocks.swap(blocks_);
            held_ = 0;
        }
        for (const auto& [bytes, bases] : blocks)
            for (void* base : bases) g_inner_deleter(base);
    }
    std::int64_t held() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return held_;
    }

private:
    std::mutex mutex_;
    std::unordered_map<std::int64_t, std::vector<void*>> blocks_; // by data bytes
    std::int64_t held_ = 0;
};
// Never destroyed: tensors may still be freed while the process exits.
BlockCache& block_cache() {
    static auto* cache = new BlockCache;
    return *cache;
}

void delete_counted(void* data) {
    if (!data) return;
    auto* base = static_cast<char*>(data) - kHeader;
    const auto* header = reinterpret_cast<const Header*>(base);
    if (header->counted) g_current.fetch_sub(header->bytes, std::memory_order_relaxed);
    if (!block_cache().keep(base, header->bytes)) g_inner_deleter(base);
}

class CountingAllocator final : public c10::Allocator {
public:
// LibTorch 2.3 made allocate() non-const and added the pure virtual copy_data().
#if ACCUM_ALLOCATOR_2_3
    c10::DataPtr allocate(size_t n) override { return allocate_impl(n); }
    void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#else
    c10::DataPtr allocate(size_t n) const override { return allocate_impl(n); }
#endif
    c10::DeleterFnPtr raw_deleter() const override { return &delete_counted; }

private:
    c10::DataPtr allocate_impl(size_t n) const {
        const bool counting = t_counting && n > 0;
        const auto bytes = static_cast<std::int64_t>(n);
        if (counting) {
            const std::int64_t budget = g_budget.load(std::memory_order_relaxed);
            const std::int64_t now = g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
            if (budget > 0 && now > budget) {
                g_current.fetch_sub(bytes, std::memory_order_relaxed);
                {
                    const std::lock_guard<std::mutex> lock(g_refusal_mutex);
                    g_denied_bytes = bytes;
                    g_denied_in_use = now - bytes;
                }
                C10_THROW_ERROR(OutOfMemoryError,
                                "CPU out of memory (memory budget). Tried to allocate " + format_byte_size(bytes) +
                                    "; " + format_byte_size(now - bytes) + " of the " + format_byte_size(budget) +
                                    " budget already in use.");
            }
            raise_to(g_peak, now);
            raise_to(g_window_peak, now);
        }
        void* base = block_cache().take(bytes);
        try {
            if (base == nullptr) base = g_inner->raw_allocate(n + kHeader);
        } catch (...) {
            if (counting) g_current.fetch_sub(bytes, std::memory_order_relaxed);
            throw;
        }
        auto* header = static_cast<Header*>(base);
        header->bytes = bytes;
        header->counted = counting ? 1 : 0;
        void* data = static_cast<char*>(base) + kHeader;
        return c10::DataPtr(data, data, &delete_counted, c10::Device(c10::DeviceType::CPU));
    }
};

} // namespace

void install_counting_allocator() {
    static std::once_flag once;
    std::call_once(once, [] {
        g_inner = c10::GetCPUAllocator();
        g_inner_deleter = g_inner->raw_deleter();
        static CountingAllocator allocator;
        c10::SetCPUAllocator(&allocator, /*priority=*/100);
    });
}

void release_cached_blocks() { block_cache().release(); }

std::int64_t cached_block_bytes() { return block_cache().held(); }

bool block_cache_enabled() { return ACCUM_BLOCK_CACHE != 0; }

CountingScope::CountingScope() : previous_(t_counting) { t_counting = true; }
CountingScope::~CountingScope() { t_counting = previous_; }

CpuCounters cpu_counters() {
    CpuCounters c;
    c.current = g_current.load(std::memory_order_relaxed);
    c.peak = g_peak.load(std::memory_order_relaxed);
    c.window_peak = g_window_peak.load(std::memory_order_relaxed);
    c.budget = g_budget.load(std::memory_order_relaxed);
    return c;
}

DeniedAllocation last_denied_allocation() {
    const std::lock_guard<std::mutex> lock(g_refusal_mutex);
    return {g_denied_bytes, g_denied_in_use};
}

void set_cpu_budget(std::int64_t bytes) { g_budget.store(bytes < 0 ? 0 : bytes); }

void reset_run_peak() {
    const auto now = g_current.load();
    g_peak.store(now);
    g_window_peak.store(now);
    const std::lock_guard<std::mutex> lock(g_refusal_mutex);
    g_denied_bytes = 0;
    g_denied_in_use = 0;
}

void reset_window_peak() { g_window_peak.store(g_current.load()); }

std::int64_t process_rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::int64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
