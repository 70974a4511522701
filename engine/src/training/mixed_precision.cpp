#include "training/mixed_precision.h"

#include <ATen/autocast_mode.h>

#ifdef ACCUM_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "accum/errors.h"
#include "torch_compat.h"

namespace accum {

namespace {

bool has_autocast(c10::DeviceType device) {
    return device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA;
}

const char* device_name(c10::DeviceType device) {
    return device == c10::DeviceType::CUDA ? "CUDA" : device == c10::DeviceType::CPU ? "the CPU" : "this device";
}

} // namespace

std::string mixed_precision_error(MixedPrecision precision, c10::DeviceType device) {
    switch (precision) {
    case MixedPrecision::No: return {};
    case MixedPrecision::Fp16:
        return device == c10::DeviceType::CUDA ? std::string() : std::string(kFp16NeedsCuda);
    case MixedPrecision::Bf16:
        return has_autocast(device) ? std::string() : std::string("bf16 needs the CPU or CUDA");
    }
    return {};
}

std::string cuda_bf16_error(int index) {
#ifdef ACCUM_WITH_CUDA
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index) != cudaSuccess) {
        cudaGetLastError(); // clear it: LibTorch checks the sticky error after its own calls
        return {};          // unknown: let autocast try
    }
    if (major < 8)
        return "bf16 needs a CUDA device of compute capability 8.0 or later (cuda:" + std::to_string(index) + " is " +
               std::to_string(major) + "." + std::to_string(minor) + "); use fp16";
#else
    (void)index;
#endif
    return {};
}

c10::ScalarType autocast_dtype(MixedPrecision precision) {
    switch (precision) {
    case MixedPrecision::No: return c10::ScalarType::Float;
    case MixedPrecision::Bf16: return c10::ScalarType::BFloat16;
    case MixedPrecision::Fp16: return c10::ScalarType::Half;
    }
    return c10::ScalarType::Float;
}

bool autocast_enabled(c10::DeviceType device) { return has_autocast(device) && compat::autocast_enabled(device); }

c10::ScalarType autocast_dtype(c10::DeviceType device) {
    return has_autocast(device) ? compat::autocast_dtype(device) : c10::ScalarType::Float;
}

AutocastScope::AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled, bool cache_enabled)
    : device_(device) {
    enter(dtype, enabled, cache_enabled);
}

void AutocastScope::enter(c10::ScalarType dtype, bool enabled, bool cache_enabled) {
    const auto device = device_;
    if (!has_autocast(device))
        throw ConfigError(std::string("autocast runs on the CPU or CUDA, not on ") + c10::DeviceTypeName(device));
    if (enabled) {
        if (dtype == c10::ScalarType::Half && device != c10::DeviceType::CUDA)
            throw ConfigError(std::string(kFp16NeedsCuda));
        if (dtype != c10::ScalarType::Half && dtype != c10::ScalarType::BFloat16)
            throw ConfigError(std::string("autocast casts to bf16 or fp16, not ") + c10::toString(dtype) + " on " +
                              device_name(device));
    } else if (dtype != c10::ScalarType::Half && dtype != c10::ScalarType::BFloat16) {
        dtype = autocast_dtype(device); // an off scope leaves the dtype as it is
    }
    // As torch.autocast.__enter__: remember, set, count the nesting level.
    previous_cache_enabled_ = at::autocast::is_autocast_cache_enabled();
    previous_enabled_ = autocast_enabled(device);
    previous_dtype_ = autocast_dtype(device);
    compat::set_autocast_enabled(device, enabled);
    compat::set_autocast_dtype(device, dtype);
    at::autocast::increment_nesting();
    at::autocast::set_autocast_cache_enabled(cache_enabled);
    entered_ = true;
}

AutocastScope::AutocastScope(c10::DeviceType device, MixedPrecision precision) : device_(device) {
    // --mixed-precision no where autocast is off already (every micro-batch of
    // an fp32 run): there is nothing to switch off, so no state is touched.
    if (precision == MixedPrecision::No && (!has_autocast(device) || !autocast_enabled(device))) return;
    enter(autocast_dtype(precision), precision != MixedPrecision::No, true);
}

AutocastScope::~AutocastScope() {
    if (!entered_) return;
    // As torch.autocast.__exit__: the cast weights are dropped when the
    // outermost scope ends, then the previous state comes back.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    compat::set_autocast_enabled(device_, previous_enabled_);
    compat::set_autocast_dtype(device_, previous_dtype_);
    at::autocast::set_autocast_cache_enabled(previous_cache_enabled_);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
