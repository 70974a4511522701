#include "memory/counting_allocator.h"

#include <atomic>
#include <fstream>
#include <mutex>
#include <string>

#include <unistd.h>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include "accum/run_config.h"

namespace accum::memory {

namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_window_peak{0};
std::atomic<std::int64_t> g_allocations{0};
std::atomic<std::int64_t> g_budget{0};
std::atomic<std::int64_t> g_failed{0};
thread_local bool t_counting = false;

void raise_to(std::atomic<std::int64_t>& peak, std::int64_t value) {
    std::int64_t seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
}

// The wrapped allocation: the inner DataPtr and the size we counted.
struct Counted {
    c10::DataPtr inner;
    std::int64_t bytes;
};

void delete_counted(void* ctx) {
    auto* c = static_cast<Counted*>(ctx);
    g_current.fetch_sub(c->bytes, std::memory_order_relaxed);
    delete c; // frees the inner allocation through its own deleter
}

class CountingAllocator final : public c10::Allocator {
public:
    explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

// LibTorch 2.3 made allocate() non-const and added the pure virtual copy_data().
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    c10::DataPtr allocate(size_t n) override { return allocate_impl(n); }
    void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#else
    c10::DataPtr allocate(size_t n) const override { return allocate_impl(n); }
#endif

private:
    c10::DataPtr allocate_impl(size_t n) const {
        if (!t_counting || n == 0) return inner_->allocate(n);
        const auto bytes = static_cast<std::int64_t>(n);
        const std::int64_t budget = g_budget.load(std::memory_order_relaxed);
        const std::int64_t now = g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
        if (budget > 0 && now > budget) {
            g_current.fetch_sub(bytes, std::memory_order_relaxed);
            g_failed.fetch_add(1, std::memory_order_relaxed);
            C10_THROW_ERROR(OutOfMemoryError,
                            "CPU out of memory (memory budget). Tried to allocate " + format_byte_size(bytes) +
                                "; " + format_byte_size(now - bytes) + " of the " + format_byte_size(budget) +
                                " budget already in use.");
        }
        raise_to(g_peak, now);
        raise_to(g_window_peak, now);
        g_allocations.fetch_add(1, std::memory_order_relaxed);
        c10::DataPtr inner;
        try {
            inner = inner_->allocate(n);
        } catch (...) {
            g_current.fetch_sub(bytes, std::memory_order_relaxed);
            throw;
        }
        void* data = inner.get();
        const c10::Device device = inner.device();
        auto* ctx = new Counted{std::move(inner), bytes};
        return c10::DataPtr(data, ctx, &delete_counted, device);
    }

    c10::Allocator* inner_;
};

} // namespace

void install_counting_allocator() {
    static std::once_flag once;
    std::call_once(once, [] {
        static CountingAllocator allocator(c10::GetCPUAllocator());
        c10::SetCPUAllocator(&allocator, /*priority=*/100);
    });
}

CountingScope::CountingScope() : previous_(t_counting) { t_counting = true; }
CountingScope::~CountingScope() { t_counting = previous_; }

CpuCounters cpu_counters() {
    CpuCounters c;
    c.current = g_current.load(std::memory_order_relaxed);
    c.peak = g_peak.load(std::memory_order_relaxed);
    c.window_peak = g_window_peak.load(std::memory_order_relaxed);
    c.allocations = g_allocations.load(std::memory_order_relaxed);
    c.budget = g_budget.load(std::memory_order_relaxed);
    c.failed = g_failed.load(std::memory_order_relaxed);
    return c;
}

void set_cpu_budget(std::int64_t bytes) { g_budget.store(bytes < 0 ? 0 : bytes); }

void reset_run_peak() {
    const auto now = g_current.load();
    g_peak.store(now);
    g_window_peak.store(now);
    g_allocations.store(0);
    g_failed.store(0);
}

void reset_window_peak() { g_window_peak.store(g_current.load()); }

std::int64_t process_rss_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::int64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

} // namespace accum::memory
