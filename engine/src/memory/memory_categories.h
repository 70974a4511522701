// Memory by category, as PyTorch's memory profiler splits it: parameters,
// gradients, optimizer state, and activations (everything else the run holds:
// saved activations, the batch, temporaries); a peak has a fifth part, the
// optimizer step's temporaries (ActivationPeakMeter). Accumulation shrinks only
// the activations; the others depend on the model and the optimizer alone.
//
// The first three are counted from the tensors themselves, each storage once
// (views and shared storages count once, in the first category that holds
// them: parameters, then gradients, then optimizer state), as the allocator
// holds them. Activations are the allocator's total less the three. On the CPU
// this adds up exactly when every tensor counted here was allocated while the
// counting allocator counted (the session moves the parameters into counted
// storage for that reason): the counting allocator counts the bytes asked for,
// which are a storage's nbytes. On CUDA each storage is rounded up to the
// caching allocator's 512-byte blocks; a large block that the allocator does
// not split may hold up to 1 MiB more, which shows as activations.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace torch::optim {
class Optimizer;
} // namespace torch::optim

namespace accum::memory {

// Parameters, gradients and optimizer state: what does not depend on the batch.
struct StaticMemory {
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
    std::int64_t frozen_parameters_bytes = 0; // of parameters_bytes: requires_grad false (no gradient, no state)
    std::int64_t total() const { return parameters_bytes + gradients_bytes + optimizer_state_bytes; }
};

struct MemoryCategories {
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
    std::int64_t activations_bytes = 0; // total less the three, never below 0
    std::int64_t total_bytes = 0;       // the allocator's figure
    std::int64_t frozen_parameters_bytes = 0; // of parameters_bytes
};

// The tensors of an optimizer's state: SGD's momentum buffers; Adam's and
// AdamW's two moments (three with amsgrad); Adagrad's sums; RMSprop's
// averages; LBFGS's directions and history. Their step counters are plain
// int64_t in LibTorch's C++ optimizers (1.13 and 2.x alike), not tensors as in
// Python: they take no tensor memory. Throws std::invalid_argument for a state
// type it does not know.
std::vector<at::Tensor> optimizer_state_tensors(const torch::optim::Optimizer& optimizer);

// The bytes the device's allocator holds for a storage of `nbytes` bytes: the
// counting CPU allocator holds what was asked; CUDA's caching allocator rounds
// up to 512 bytes.
std::int64_t allocator_bytes(std::int64_t nbytes, const c10::Device& device);

// Parameters, gradients (their .grad) and the optimizer's state (may be null)
// that lie on `device` (a CUDA device without an index matches any).
StaticMemory static_memory(const std::vector<at::Tensor>& parameters, const torch::optim::Optimizer* optimizer,
                           const c10::Device& device);

// The four categories, given the allocator's current total on that device.
MemoryCategories categorize(const StaticMemory& fixed, std::int64_t allocator_total);

// A peak and what it was made of: the five parts add up to peak_bytes.
struct PeakComposition {
    std::int64_t peak_bytes = 0;
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
    std::int64_t activations_bytes = 0;     // saved activations, the batch, forward's and backward's temporaries
    std::int64_t optimizer_step_bytes = 0;  // what clipping and the optimizer step needed above the activations
};

// The peak split by the static part at that moment; the rest activations. A
// static part above the peak (not seen: the peak is at least the memory now,
// which holds the static part) leaves activations at 0 and takes the excess off
// gradients, then optimizer state, then parameters, so the parts still add up.
PeakComposition compose_peak(std::int64_t peak, const StaticMemory& at_peak);

// The peak of activations in an optimizer step (a window of micro-batches),
// and of the optimizer step's temporaries: the allocator's peak less
// parameters, gradients and optimizer state at that moment. The allocator keeps
// a peak, not when it happened, so the loop reads and resets its window peak at
// two points, where the static part is known, and each reading covers the time
// since the previous one:
//   after_backward  (loading the batch, forward, backward): activations.
//                   Gradients are made during backward and nothing static is
//                   freed, so the static part now is the largest it was: the
//                   peak is taken less it. That is exact when the gradients
//                   existed already (micro-batches 2..K of a window, or every
//                   one when zero_grad keeps the tensors) and otherwise low by
//                   at most the gradients not yet made when the peak came
//                   (set_to_none with K = 1 only; at most the gradient bytes);
//   after_step      (clipping, optimizer step, zero_grad): the optimizer
//                   step's temporaries (AdamW's are a few times the parameters:
//                   at a small micro-batch they are the larger peak). The
//                   gradients lived until zero_grad and the optimizer state is
//                   the new one: the peak less the parameters and gradients of
//                   the last after_backward and the optimizer state now.
// Kept apart, the activations keep falling with the micro-batch where the
// step's temporaries would hide them.
//
// The meter also keeps the interval's peak for the memory records: the largest
// reading since take_interval() and what it was made of. Its rest above the
// static part is the interval's largest activations (up to that rest), and
// what the optimizer step needed above them: a peak at the optimizer step
// shows as the activations the micro-batches reached plus the step's extra, a
// stack whose top is the peak, so a record sampled between micro-batches,
// when the activations are freed, still says where the memory went.
//   at_record      a reading when a memory record is made (before a
//                  micro-batch, at the start and the end of the run): counts
//                  for the step and the interval as activations;
//   outside_steps  a reading after evaluation: counts for the interval only
//                  (evaluation's memory is not a step's activations).
class ActivationPeakMeter {
public:
    void after_backward(std::int64_t peak, const StaticMemory& now);
    // `held`: activation memory alive through the step (the loop's last batch
    // and its outputs), not the step's own.
    void after_step(std::int64_t peak, const StaticMemory& now, std::int64_t held = 0);
    void at_record(std::int64_t peak, const StaticMemory& now);
    void outside_steps(std::int64_t peak, const StaticMemory& now);

    // The interval's largest reading since the last take_interval(), and its parts.
    PeakComposition interval() const;
    // The interval's figures; starts the next interval.
    PeakComposition take_interval();

    struct StepPeak {
        std::int64_t peak_bytes = 0;
        std::int64_t peak_activations_bytes = 0;      // forward and backward, the largest of the window
        std::int64_t peak_optimizer_step_bytes = 0;   // clipping, the step and zero_grad, above the static part
    };
    // The window's figures; starts the next window.
    StepPeak take_step();

private:
    enum class Phase { Activations, OptimizerStep };
    void seen(std::int64_t peak, const StaticMemory& at_peak, Phase phase, bool in_step, std::int64_t held = 0);
    StaticMemory after_backward_{};
    StepPeak step_{};
    std::int64_t interval_peak_ = 0;
    StaticMemory interval_static_{};
    std::int64_t interval_activations_ = 0;
};

} // namespace accum::memory
// SPDX-License-Identifier: GPL-3.0-or-later
