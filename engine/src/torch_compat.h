#pragma once
// Where the LibTorch versions the engine supports differ: Debian's 1.13 (the
// quick-start build) and the 2.x line (2.11 tested, with CUDA; the first-class
// build). The engine is written once against the names below; no other file
// tests TORCH_VERSION. Where a difference is a class's shape (a virtual to
// override, a base class) the file names it through this header's ACCUM_*
// macros: memory/counting_allocator.cpp, distributed/process_group.cpp and
// distributed/store_client.cpp.
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
//                c10d::ProcessGroup in 1.13); c10d::Store has clone() from 2.0;
//                the TCPStore of 2.x speaks a store protocol of its own (a
//                VALIDATE first, the queries numbered anew), which 1.13's client
//                and server do not: a 1.13 build cannot join torchrun 2.x's store.
//                2.x throws typed errors (c10::DistNetworkError, DistStoreError,
//                DistBackendError); 1.13 only c10d::TimeoutError (classify_failure,
//                distributed/process_group.cpp, tells the rest by the store
//                client's and Gloo's types).
//   AOTInductor  torch::inductor::AOTIModelPackageLoader runs .pt2 packages
//                (2.6 on); 1.13 refuses them by name (models/pt2_model.cpp).
#include <exception>

#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/exception.h>
#include <torch/version.h>

#define ACCUM_TORCH_AT_LEAST(major, minor) \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10d's backends derive from c10d::Backend (else c10d::ProcessGroup), and
// c10d::Store has a virtual clone() to override.
#define ACCUM_C10D_BACKEND_CLASS ACCUM_TORCH_AT_LEAST(2, 0)
#define ACCUM_C10D_STORE_CLONE ACCUM_TORCH_AT_LEAST(2, 0)
// c10::Allocator::allocate() is const-free and copy_data() pure virtual.
#define ACCUM_ALLOCATOR_2_3 ACCUM_TORCH_AT_LEAST(2, 3)
// AOTInductor packages (.pt2) run through torch::inductor::AOTIModelPackageLoader
// (models/pt2_model.cpp); 1.13 has no AOTInductor.
#define ACCUM_PT2_PACKAGES ACCUM_TORCH_AT_LEAST(2, 6)

namespace accum::compat {

// "1.13.1", "2.11.0": the LibTorch this build links.
inline constexpr const char* kTorchVersion = TORCH_VERSION;

// This build's TCPStore client speaks the store protocol of torch 2.x (torchrun's agent store).
inline constexpr bool kStoreClientSpeaksTorch2 = ACCUM_TORCH_AT_LEAST(2, 0);

// What a c10d failure is, told by the exception's type where the build gives one.
enum class C10dErrorType {
    Timeout, // a socket or store wait ran out of time (c10d::TimeoutError, both versions)
    Network, // a socket failed: refused, reset, closed (2.x c10::DistNetworkError)
    Store,   // the store refused or timed out a wait (2.x c10::DistStoreError)
    Backend, // the backend's collective failed (2.x c10::DistBackendError)
    Unknown, // no type says: the caller reads the message
};
inline C10dErrorType c10d_error_type(const std::exception& e) {
    if (dynamic_cast<const c10d::TimeoutError*>(&e)) return C10dErrorType::Timeout;
#if ACCUM_TORCH_AT_LEAST(2, 0)
    if (dynamic_cast<const c10::DistNetworkError*>(&e)) return C10dErrorType::Network;
    if (dynamic_cast<const c10::DistStoreError*>(&e)) return C10dErrorType::Store;
    if (dynamic_cast<const c10::DistBackendError*>(&e)) return C10dErrorType::Backend;
#endif
    return C10dErrorType::Unknown;
}

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
// SPDX-License-Identifier: GPL-3.0-or-later
