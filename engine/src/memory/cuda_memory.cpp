#include "memory/cuda_memory.h"

#ifdef ACCUM_WITH_CUDA
#include <c10/core/Device.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace accum::memory {

#ifdef ACCUM_WITH_CUDA

// The caching allocator's API across the LibTorch versions we build against
// (checked in the 1.13 and 2.x headers):
//  - its functions took an `int` device up to 2.2 and take a c10::DeviceIndex
//    (int8_t) since 2.3: we pass a DeviceIndex, which converts to either;
//  - emptyCache() gained a defaulted memory-pool argument in 2.x: called bare;
//  - DeviceStats later moved toward c10::CachingDeviceAllocator (shared by the
//    device allocators); the fields read here (StatArray allocated_bytes and
//    reserved_bytes, num_alloc_retries, num_ooms) are the same in all, so the
//    type is left to `auto`.
namespace {
namespace allocator = c10::cuda::CUDACachingAllocator;
// StatType::AGGREGATE, the first entry of every StatArray (all pools together).
constexpr std::size_t kAggregate = 0;
c10::DeviceIndex index_of(int device) { return static_cast<c10::DeviceIndex>(device); }
} // namespace

bool cuda_compiled() { return true; }

CudaStats cuda_stats(int device) {
    CudaStats s;
    const auto stats = allocator::getDeviceStats(index_of(device));
    s.available = true;
    s.allocated = stats.allocated_bytes[kAggregate].current;
    s.reserved = stats.reserved_bytes[kAggregate].current;
    s.peak_allocated = stats.allocated_bytes[kAggregate].peak;
    s.alloc_retries = stats.num_alloc_retries;
    s.ooms = stats.num_ooms;
    // cudaMemGetInfo reports on the current device: make it `device` for the call.
    const c10::cuda::CUDAGuard guard(index_of(device));
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
        s.device_free = static_cast<std::int64_t>(free_bytes);
        s.device_total = static_cast<std::int64_t>(total_bytes);
    } else {
        cudaGetLastError(); // clear it: LibTorch checks the sticky error after its own calls
    }
    return s;
}

std::string cuda_device_name(int device) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
        cudaGetLastError();
        return {};
    }
    return properties.name;
}

void cuda_reset_peak(int device) { allocator::resetPeakStats(index_of(device)); }

void cuda_set_memory_fraction(double fraction, int device) {
    allocator::setMemoryFraction(fraction, index_of(device));
}

void cuda_empty_cache() { allocator::emptyCache(); }

#else

bool cuda_compiled() { return false; }
CudaStats cuda_stats(int) { return {}; }
std::string cuda_device_name(int) { return {}; }
void cuda_reset_peak(int) {}
void cuda_set_memory_fraction(double, int) {}
void cuda_empty_cache() {}

#endif

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
