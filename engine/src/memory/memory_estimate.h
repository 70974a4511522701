// A run's memory before it runs (what `accum-run estimate` prints): the static
// part from the parameters and the optimizer alone (as `accelerate
// estimate-memory` gives it), and the activations from one short probe of the
// model: forward and backward of two small micro-batches, fitted as
// fixed + per_sample × B, which is what accumulation scales.
// The run's estimate and its peak at (B, K) are made of these parts in
// accum/run_estimate.h (RunMemoryEstimate::peak_at).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "memory/memory_categories.h"

namespace accum::memory {

// The optimizer as far as memory goes (parsed from the run's options at the edge).
struct OptimizerSpec {
    enum class Kind { Sgd, AdamW };
    Kind kind = Kind::Sgd;
    double momentum = 0.0;     // SGD: a momentum buffer when > 0
    double weight_decay = 0.0; // SGD: one temporary per parameter in step
    bool nesterov = false;     // SGD: one more temporary
    bool amsgrad = false;      // AdamW: a third moment buffer
};

// Copies of the parameters the optimizer keeps: SGD 0 (1 with momentum), AdamW 2 (3 with amsgrad).
int optimizer_state_copies(const OptimizerSpec& optimizer);

// The static part for one dtype of parameters.
struct DtypeBytes {
    std::string dtype; // "Float", "BFloat16", … (c10's names)
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
};

struct StaticEstimate {
    std::vector<DtypeBytes> by_dtype;
    StaticMemory total;
    // The most the optimizer step allocates besides its state (AdamW: the
    // denominator and its square root, 2 × the largest parameter).
    std::int64_t step_temporary_bytes = 0;
};

// From the parameters' shapes and dtypes, each as the device's allocator would
// hold it (allocator_bytes); gradients for those that require grad.
StaticEstimate estimate_static(const std::vector<at::Tensor>& parameters, const OptimizerSpec& optimizer,
                               const c10::Device& device);

struct ProbePoint {
    std::int64_t batch_size = 0;
    std::int64_t bytes = 0;
};

// peak ≈ fixed + per_sample × B, least squares through the points (one point:
// through the origin). The memory planner fits its probe runs the same way.
struct LinearFit {
    std::vector<ProbePoint> points;
    double fixed_bytes = 0;
    double per_sample_bytes = 0;
    double at(std::int64_t batch_size) const { return fixed_bytes + per_sample_bytes * static_cast<double>(batch_size); }
};
LinearFit fit_line(const std::vector<ProbePoint>& points);

// What the probe reads from the device's allocator: bytes alive now, the peak
// since reset_peak(). cpu_counting_allocator(): the counting CPU allocator
// (memory/counting_allocator.h); on CUDA the caller builds one from
// cuda_stats(device).allocated / .peak_allocated and cuda_reset_peak(device).
struct AllocatorReadings {
    c10::Device device{c10::kCPU};
    std::function<std::int64_t()> current;
    std::function<std::int64_t()> peak;
    std::function<void()> reset_peak;
};
AllocatorReadings cpu_counting_allocator();

// For each size B, runs micro_step(B) (build a batch of B samples, forward,
// backward) with the gradients already there (as micro-batches 2..K of a
// window), and measures the peak above what was alive before: the
// activations, as ActivationPeakMeter reads them in a run. The parameters'
// gradients are released afterwards (none before, none after). With the counting CPU allocator it needs a CountingScope on
// this thread (and the allocator installed); throws std::logic_error otherwise.
std::vector<ProbePoint> probe_activations(const std::function<void(std::int64_t)>& micro_step,
                                          const std::vector<at::Tensor>& parameters,
                                          const std::vector<std::int64_t>& sizes,
                                          const AllocatorReadings& allocator = cpu_counting_allocator());

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
