#include "memory/cuda_memory.h"

#ifdef ACCUM_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace accum::memory {

#ifdef ACCUM_WITH_CUDA

bool cuda_compiled() { return true; }

CudaStats cuda_stats(int device) {
    CudaStats s;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
    constexpr std::size_t kAggregate = 0; // StatType::AGGREGATE
    s.available = true;
    s.allocated = stats.allocated_bytes[kAggregate].current;
    s.reserved = stats.reserved_bytes[kAggregate].current;
    s.peak_allocated = stats.allocated_bytes[kAggregate].peak;
    s.alloc_retries = stats.num_alloc_retries;
    s.ooms = stats.num_ooms;
    size_t free_bytes = 0, total_bytes = 0;
    int previous = 0;
    if (cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        s.device_free = static_cast<std::int64_t>(free_bytes);
        s.device_total = static_cast<std::int64_t>(total_bytes);
    }
    cudaSetDevice(previous);
    return s;
}

void cuda_reset_peak(int device) { c10::cuda::CUDACachingAllocator::resetPeakStats(device); }

void cuda_set_memory_fraction(double fraction, int device) {
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device);
}

void cuda_empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

#else

bool cuda_compiled() { return false; }
CudaStats cuda_stats(int) { return {}; }
void cuda_reset_peak(int) {}
void cuda_set_memory_fraction(double, int) {}
void cuda_empty_cache() {}

#endif

} // namespace accum::memory
