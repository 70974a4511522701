#pragma once
// Where the LibTorch versions the engine supports differ: Debian's 1.13 (the
// default build) and the 2.x line (2.11 tested, with CUDA). The engine is
// written once against the names below; the two other places that depend on
// the version use this header's ACCUM_TORCH_AT_LEAST (memory/counting_allocator.cpp,
// the allocator's virtuals) or name the c10d base class themselves
// (distributed/process_group.cpp, the one file that includes c10d).
//
//   autocast     2.4 made the functions device-generic (is/set_autocast_enabled
//                and get/set_autocast_dtype take a device type); 1.13-2.3 have
//                is_cpu_enabled/set_cpu_enabled/get_autocast_cpu_dtype for the
//                CPU and is_enabled/set_enabled/get_autocast_gpu_dtype for CUDA,
//                deprecated since 2.4.
//   AMP ops      _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_
//                have CPU kernels from 2.3 (CUDA only before).
//   Allocator    c10::Allocator::allocate() lost its const and copy_data() became
//                pure virtual in 2.3.
//   c10d         the backends derive from c10d::Backend from 2.0 (from
//                c10d::ProcessGroup in 1.13); distributed/process_group.cpp names
//                it through its own alias, the one file that includes c10d.
#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#define ACCUM_TORCH_AT_LEAST(major, minor) \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace accum::compat {

// The loss scaler's unscale and update run LibTorch's own AMP kernels on the CPU too.
inline constexpr bool kAmpOpsOnCpu = ACCUM_TORCH_AT_LEAST(2, 3);

// Autocast for `device` (CPU or CUDA; the caller checks which it has).
inline bool autocast_enabled(c10::DeviceType device) {
#if ACCUM_TORCH_AT_LEAST(2, 4)
    return at::autocast::is_autocast_enabled(device);
#else
    return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
#if ACCUM_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(device, enabled);
#else
    if (device == c10::DeviceType::CPU)
        at::autocast::set_cpu_enabled(enabled);
    else
        at::autocast::set_enabled(enabled);
#endif
}

inline c10::ScalarType autocast_dtype(c10::DeviceType device) {
#if ACCUM_TORCH_AT_LEAST(2, 4)
    return at::autocast::get_autocast_dtype(device);
#else
    return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                          : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void set_autocast_dtype(c10::DeviceType device, c10::ScalarType dtype) {
#if ACCUM_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_dtype(device, dtype);
#else
    if (device == c10::DeviceType::CPU)
        at::autocast::set_autocast_cpu_dtype(dtype);
    else
        at::autocast::set_autocast_gpu_dtype(dtype);
#endif
}

} // namespace accum::compat
