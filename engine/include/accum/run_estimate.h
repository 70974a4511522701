#pragma once
// A run's memory before it runs, without training (`accum-run estimate`, the
// studio's estimate beside the effective batch, and the memory planner's fit):
// parameters, gradients and optimizer state per dtype from the model's shapes
// (as `accelerate estimate-memory` gives them), and the activations from one
// short probe of the configured model — forward and backward of two small
// micro-batches, fitted as fixed + per_sample × B. K does not enter: the
// micro-batch sets the peak.
//
//   peak(B) ≈ parameters + gradients + optimizer state
//             + max(activations(B), the optimizer step's temporaries)
//
// and what the whole process will take in host memory, checkpoints included:
//
//   process(B) ≈ peak(B) (on the CPU; 0 when the tensors are on a GPU)
//                + the process's own memory (measured after the probe: what is
//                  resident and not a tensor the estimate holds: the libraries,
//                  the data set, LibTorch's and the threads' own)
//                + what saving a checkpoint adds (at most the largest tensor:
//                  the writer streams each tensor from its own memory)
//
// Torch-free, like the rest of accum/.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "accum/run_config.h"

namespace accum {

struct DtypeMemory {
    std::string dtype; // "Float", "BFloat16", … (LibTorch's names)
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
};

struct ActivationProbe {
    std::int64_t batch_size = 0;
    std::int64_t activation_bytes = 0; // the probe's peak less what was alive before and the gradients it made
};

struct RunMemoryEstimate {
    bool ok = false;
    std::string error;                 // why there is no estimate (an invalid option, missing data, cancelled)
    bool cancelled = false;
    bool busy = false;                 // a training run in this process came first (cancelled too)
    int exit_code = 0;                 // accum-run's code for the error (2 invalid options, 4 data, 3 out of memory, 1 other)
    std::string device;                // "cpu", "cuda:0"
    std::string model;                 // the model's description
    std::int64_t batch_size = 0;
    std::int64_t accumulation_steps = 0;
    std::int64_t effective_batch = 0;
    bool gradient_checkpointing = false;
    std::vector<DtypeMemory> by_dtype;
    std::int64_t parameters_bytes = 0;
    std::int64_t frozen_parameters_bytes = 0; // of parameters_bytes, those that take no gradient (LoRA's base)
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
    std::int64_t step_temporary_bytes = 0; // the most the optimizer step allocates besides its state
    std::vector<ActivationProbe> probes;
    double activation_fixed_bytes = 0;     // the fit: fixed + per_sample × B
    double activation_per_sample_bytes = 0;
    double activation_bytes = 0;           // at batch_size × accumulation_steps
    double predicted_peak_bytes = 0;       // at batch_size × accumulation_steps
    // A compiled .pt2 step returns every gradient from its call at once: they are
    // activations while the window's gradients exist (its micro-batches 2..K, which
    // the probe measures); at K = 1 they become the gradients themselves.
    std::int64_t returned_gradient_bytes = 0;
    std::int64_t process_overhead_bytes = 0; // measured: the process's resident memory that is no tensor
    std::int64_t save_bytes = 0;             // the most a checkpoint's save adds (the largest tensor)
    bool tensors_in_host_memory = true;      // the device is the CPU: the tensors' peak is the process's too
    double process_bytes = 0;                // the whole process at batch_size (host memory)
    double seconds = 0;                    // how long the estimate took

    std::int64_t static_bytes() const { return parameters_bytes + gradients_bytes + optimizer_state_bytes; }
    double activations_at(std::int64_t batch_size) const;
    // At K = 1 the returned gradients (a .pt2 step) are the gradients themselves.
    double activations_at(std::int64_t batch_size, std::int64_t accumulation_steps) const;
    // K always given: at K = 1 a .pt2 step's returned gradients are the
    // gradients themselves (a defaulted K was behind two planner bugs).
    double peak_at(std::int64_t batch_size, std::int64_t accumulation_steps) const;
    double process_at(std::int64_t batch_size, std::int64_t accumulation_steps) const;
    // A few lines for a terminal: each category per dtype, the activations per
    // sample, the predicted peak for B × K.
    std::string describe() const;
};

// Builds the configured model on its device (the data set loaded as a run loads
// it, uncounted), and probes it. Never throws for a run's own problems (invalid
// options, missing data, out of memory): they end up in `error`. `cancelled`
// (may be empty) is asked between the phases; when it returns true the
// estimate stops there (cancelled, not ok).
//
// The probe draws random numbers (the model's initialisation, dropout) from the
// global generator, and puts its state back afterwards, and counts memory on the
// process's counters: it never overlaps a training run of this process. A run
// that starts meanwhile waits for it, and it stops at its next check (busy); one
// that starts while a run trains is busy at once.
RunMemoryEstimate estimate_run_memory(const RunConfig& config, const std::function<bool()>& cancelled = {});

// The probe's micro-batch sizes for a configured micro-batch B: B itself and
// about half of it up to 32, then 16 and 32 (the fit extrapolates).
std::vector<std::int64_t> probe_sizes(std::int64_t batch_size);

std::string to_json_text(const RunMemoryEstimate& estimate);

// The samples of the configured training split, as a run loads it (a tensors
// or CSV file is read; the built-in sets' sizes are known): 0 when it cannot
// be read (the run itself will say why).
std::int64_t training_samples(const RunConfig& config);

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
