#pragma once
// The records a run emits. Plain values (no tensors), so they cross threads
// and processes cheaply; the JSON Lines form is in metrics_io.h.

#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace accum {

// One micro-batch (only when RunConfig::record_micro_steps is set).
struct MicroStepRecord {
    std::int64_t micro_step = 0;     // 1-based, counts every micro-batch of the run
    std::int64_t step = 0;           // optimizer steps done before this micro-batch
    int window_index = 0;            // 1..K position inside the accumulation window
    int window_size = 0;             // K (or the real size of a partial window)
    bool sync = false;               // this micro-batch ends the window: the optimizer steps
    double loss = 0.0;               // this micro-batch's loss, unscaled
    double grad_norm = 0.0;          // norm of the accumulated .grad after its backward; NaN (not
                                     // computed) unless at teaching pace or paused
    double epoch = 0.0;
    // Data parallel: gradient all-reduce calls at the end of this micro-batch's
    // backward (0 under no_sync; 1 per bucket on the window's last micro-batch).
    std::int64_t grad_allreduces = 0;
    bool autocast = false;           // its forward ran under autocast (--mixed-precision bf16 or fp16)
    double loss_scale = 0.0;         // the loss scaler's scale S (loss × S went backward); 0 when the
                                     // run has no loss scaler
};

struct StepRecord {
    std::int64_t step = 0;           // optimizer step, 1-based
    std::int64_t micro_step = 0;
    double epoch = 0.0;              // fractional
    double loss = 0.0;               // window mean, unscaled
    double learning_rate = 0.0;      // the rate this step used
    double grad_norm = 0.0;          // before clipping
    std::int64_t samples_seen = 0;
    double elapsed_s = 0.0;
    std::int64_t memory_bytes = 0;
    std::int64_t peak_memory_bytes = 0; // peak since the previous step
    // The step's peaks less parameters, gradients and optimizer state at that
    // moment: in forward and backward (activations), and in clipping, the
    // optimizer step and zero_grad (the step's temporaries).
    std::int64_t peak_activations_bytes = 0;
    std::int64_t peak_optimizer_step_bytes = 0;
    // Data parallel: gradient all-reduce calls since the previous step, their
    // time and the bytes they reduced (0 in a one-process run).
    std::int64_t grad_allreduces = 0;
    double allreduce_seconds = 0.0;
    std::int64_t allreduce_bytes = 0;
    double loss_scale = 1.0;         // the loss scaler's scale for this window (1 without scaling)
    bool skipped = false;            // the update was skipped: the loss scaler found inf/NaN gradients
                                     // (an overflow), or --skip-nonfinite a non-finite window
    int threads = 0;                 // compute threads the run uses after this step (0 = not known)
    // The gradient noise scale (McCandlish et al. 2018, appendix A), docs/noise-scale.md: the window's
    // squared gradient norms at two batch sizes and the running estimate B_simple, in samples (or
    // tokens with token normalisation). NaN where not measured.
    double grad_norm_sq_small = std::numeric_limits<double>::quiet_NaN();
    double grad_norm_sq_big = std::numeric_limits<double>::quiet_NaN();
    double batch_small = 0.0;
    double batch_big = 0.0;
    double noise_scale = std::numeric_limits<double>::quiet_NaN();
};

struct EvalRecord {
    std::int64_t step = 0;
    double epoch = 0.0;
    double eval_loss = 0.0;
    double eval_accuracy = 0.0;
    double eval_f1 = 0.0;
    // How long the evaluation took and what it covered (the Trainer's
    // eval_runtime, eval_samples_per_second, eval_steps_per_second).
    double runtime_s = 0.0;
    std::int64_t samples = 0;
    std::int64_t batches = 0;
};

struct MemoryRecord {
    double elapsed_s = 0.0;
    std::int64_t memory_bytes = 0;   // current tensor memory (CPU) or allocated (CUDA)
    std::int64_t peak_memory_bytes = 0; // peak of the run so far
    std::int64_t reserved_bytes = 0; // CUDA caching allocator's reserve; 0 on CPU
    std::int64_t budget_bytes = 0;   // 0 = none
    std::int64_t rss_bytes = 0;      // process resident set
    bool cuda = false;
    // memory_bytes by category, each storage counted once: they add up to it.
    std::int64_t parameters_bytes = 0;
    std::int64_t gradients_bytes = 0;
    std::int64_t optimizer_state_bytes = 0;
    std::int64_t activations_bytes = 0; // everything else: saved activations, the batch, temporaries
    // Of parameters_bytes, the frozen ones (requires_grad false: a LoRA run's
    // base weights): no gradients, no optimizer state. 0 when all train.
    std::int64_t frozen_parameters_bytes = 0;
    // The peak of tracked memory since the previous memory record (records are
    // made between micro-batches, when the activations are freed: the peak says
    // where the memory went), and what it was made of: the static part at that
    // moment, the interval's largest activations, and what the optimizer step
    // needed above them. The five parts add up to it. 0 in a record written
    // before these existed.
    std::int64_t interval_peak_bytes = 0;
    std::int64_t peak_parameters_bytes = 0;
    std::int64_t peak_gradients_bytes = 0;
    std::int64_t peak_optimizer_state_bytes = 0;
    std::int64_t peak_activations_bytes = 0;
    std::int64_t peak_optimizer_step_bytes = 0;
    int rank = 0;                    // the process's rank in a data-parallel run
};

enum class RunStatus { Completed, Stopped, OutOfMemory, Diverged, Error };

// A summary's message as a code with named arguments, for an interface that
// says it in its own language (the studio translates it); `message` keeps the
// English text. code "" when the message has none.
struct EngineMessage {
    std::string code;                          // e.g. "out_of_memory", "diverged", "data_missing"
    std::map<std::string, std::string> args;   // e.g. {"batch_size": "256", "budget": "40.0 MiB"}
};

struct SummaryRecord {
    RunStatus status = RunStatus::Completed;
    std::string message;
    std::int64_t optimizer_steps = 0;
    std::int64_t micro_steps = 0;
    std::int64_t samples_seen = 0;
    double train_runtime_s = 0.0;
    double samples_per_second = 0.0;
    std::int64_t peak_memory_bytes = 0;
    double final_loss = 0.0;         // last window's loss (NaN if none)
    int exit_code = 0;               // the accum-run exit code for this outcome
    std::string device;              // "cpu" or "cuda:0"
    // On out-of-memory: a suggested micro-batch and K with the same effective batch.
    std::int64_t suggested_batch_size = 0;
    std::int64_t suggested_accumulation_steps = 0;
    bool suggested_gradient_checkpointing = false; // the suggestion turns gradient checkpointing on
    int world_size = 1;              // processes of a data-parallel run
    std::string cpu_kernels;         // "fused" or "aten" (RunConfig::cpu_kernels)
    double noise_scale = std::numeric_limits<double>::quiet_NaN(); // the last running estimate
    EngineMessage detail;            // `message` as a code and its arguments
};

const char* to_string(RunStatus status);

// Exit codes of accum-run (docs/ARCHITECTURE.md §3.4, and docs/accum-run.md).
namespace exit_code {
inline constexpr int completed = 0;
inline constexpr int failure = 1;
inline constexpr int invalid_arguments = 2;
inline constexpr int out_of_memory = 3;
inline constexpr int data_error = 4;
inline constexpr int diverged = 5;
inline constexpr int distributed_failure = 6; // a peer lost, a rendezvous timed out, a port in use
inline constexpr int write_failed = 7;        // a file of the run could not be written (disk full, I/O error, read-only or vanished directory)
inline constexpr int interrupted = 130;
} // namespace exit_code

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
