#pragma once
// CUDA caching-allocator statistics. Compiled with CUDA only when the LibTorch
// found at configure time has it (ACCUM_WITH_CUDA); otherwise these report
// "unavailable" and do nothing.

#include <cstdint>
#include <string>

namespace accum::memory {

struct CudaStats {
    bool available = false;
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    std::int64_t peak_allocated = 0;
    std::int64_t alloc_retries = 0;
    std::int64_t ooms = 0;
    std::int64_t device_free = 0;
    std::int64_t device_total = 0;
};

bool cuda_compiled();
CudaStats cuda_stats(int device);
// The device's own name ("NVIDIA H200"); "" when it cannot be read.
std::string cuda_device_name(int device);
void cuda_reset_peak(int device);
// Limits the caching allocator to `fraction` of the device (budget / total).
void cuda_set_memory_fraction(double fraction, int device);
void cuda_empty_cache();

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
