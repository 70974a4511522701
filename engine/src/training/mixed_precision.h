#pragma once
// Mixed precision: the policy (which lower precision runs where) and an
// autocast scope, the engine's `with torch.autocast(device_type, dtype):`.
//
// Inside a scope, operators that autocast lists as lower-precision (linear,
// conv, matmul, bmm, baddbmm, ...) cast their floating-point inputs to the
// scope's dtype and return it; others keep fp32 or promote. The parameters
// stay fp32 (the master weights), and so do their gradients. Run the forward
// and the loss inside the scope and backward() outside it, as PyTorch's AMP
// examples do.
//
// The autocast state is thread-local (LibTorch keeps it in the thread's
// dispatch-key set): create the scope on the thread that runs the forward.

#include <optional>
#include <string>
#include <string_view>

#include <c10/core/DeviceType.h>

#include "accum/run_config.h"
#include <c10/core/ScalarType.h>

namespace accum {

// --mixed-precision no|bf16|fp16 is accum::MixedPrecision (accum/run_config.h),
// parsed with the other options.

// "" when `precision` can run on `device`, else why not (kFp16NeedsCuda for
// fp16 anywhere but CUDA; a device without autocast for bf16).
std::string mixed_precision_error(MixedPrecision precision, c10::DeviceType device);

// "" when CUDA device `index` runs bf16 (torch.cuda.is_bf16_supported(): compute
// capability 8.0, Ampere, or later), else why not. "" in a build without CUDA.
std::string cuda_bf16_error(int index);

// The lower-precision dtype autocast runs in: kBFloat16, kHalf, or kFloat for No.
c10::ScalarType autocast_dtype(MixedPrecision precision);

// Whether autocast is on for `device` on this thread (CPU or CUDA; false for others).
bool autocast_enabled(c10::DeviceType device);
// The dtype autocast casts to on `device` when it is on (bf16 by default on the
// CPU, fp16 on CUDA).
c10::ScalarType autocast_dtype(c10::DeviceType device);

// torch.autocast(device_type, dtype, enabled, cache_enabled) as a C++ scope.
// On entry it remembers the device's enabled flag, its dtype and the cast-cache
// flag, sets them, and counts one more nesting level; on exit it restores all
// three and, when it leaves the outermost scope, clears the cache of cast
// weights, as torch.autocast.__exit__ does. A scope with enabled = false turns
// autocast off inside an enabled one (e.g. for a part that must run in fp32).
//
// Throws ConfigError when the device has no autocast here (only CPU and CUDA)
// or the dtype is not lower precision, and with kFp16NeedsCuda for fp16 on a
// device other than CUDA (our policy: bf16 is the CPU's lower precision).
class AutocastScope {
public:
    AutocastScope(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true, bool cache_enabled = true);
    // The scope a run's --mixed-precision asks for; for No, a scope that switches
    // autocast off only where an outer scope had it on (else it touches nothing).
    AutocastScope(c10::DeviceType device, MixedPrecision precision);
    ~AutocastScope();
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    void enter(c10::ScalarType dtype, bool enabled, bool cache_enabled);

    c10::DeviceType device_;
    bool entered_ = false; // whether the state was set (and is restored on exit)
    bool previous_enabled_ = false;
    c10::ScalarType previous_dtype_ = c10::ScalarType::BFloat16;
    bool previous_cache_enabled_ = true;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
