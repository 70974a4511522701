#pragma once
// What every style's loop stands on: the run's parts (training/run_parts.h) and
// the calls the loops make between micro-batches and optimizer steps, which
// turn them into records (step, eval, memory, micro-step), log lines and
// checkpoints, so that the loop a learner reads in the code panel is the loop
// that runs. Its state is its own: the loops and the session read it through
// the accessors below. With several processes it defers to the ranks'
// agreement (distributed/rank_agreement.h) for stop, pause and the window's loss.

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include <torch/types.h>

#include "accum/records.h"
#include "accum/run_config.h"
#include "accum/sink.h"
#include "data/data_loader.h"
#include "data/dataset.h"
#include "kernels/kernels.h"
#include "memory/memory_categories.h"
#include "models/model.h"
#include "training/checkpoint.h"
#include "training/control.h"
#include "training/lr_scheduler.h"
#include "training/noise_scale.h"
#include "training/optimizer.h"
#include "training/run_log.h"
#include "training/run_parts.h"
#include "other_load.h"
#include "training/thread_tuner.h"

namespace accum {

namespace dist {
class RankAgreement;
}

class RunContext {
public:
    // Builds the run's parts (build_run_parts) and, when this thread's run has
    // several processes (dist::default_state()), joins the others: the same
    // configuration everywhere, rank 0's initial weights. Throws as
    // build_run_parts does, and ConfigError when the ranks' options differ.
    RunContext(const RunConfig& config, Sink& sink, RunControl& control);
    ~RunContext();
    RunContext(const RunContext&) = delete;
    RunContext& operator=(const RunContext&) = delete;

    // The parts, as the loops use them.
    const RunConfig& config() const { return config_; }
    const torch::Device& device() const { return parts_->device; }
    const DataSplits& data() const { return parts_->data; }
    Model& model() { return *parts_->model; }
    Optimizer& optimizer() { return *parts_->optimizer; }
    LrScheduler& lr_scheduler() { return *parts_->lr_scheduler; }
    LossScaler& scaler() { return *parts_->scaler; }
    DataLoader& train_loader() { return *parts_->train_loader; }
    const Progress& progress() const { return progress_; }

    // Data parallel: this process's rank and the number of processes; 0 and 1
    // otherwise. Only rank 0 writes records, logs and checkpoints.
    int rank() const;
    int world_size() const;
    bool is_main_process() const { return rank() == 0; }
    // The run ends early: a stop requested (one process), or agreed by the ranks
    // at a gradient sync (several: they stop together, after that window).
    bool stopped() const;

    std::int64_t micro_batches_per_epoch() const { return parts_->train_loader->size(); }
    std::int64_t updates_per_epoch() const { return parts_->updates_per_epoch; } // ceil(L / K)
    std::int64_t total_updates() const { return parts_->total_updates; }
    std::int64_t num_epochs() const { return parts_->num_epochs; }
    bool uses_token_normalization() const { return config_.loss_normalization == LossNormalization::Tokens; }
    // Replaces the plain log lines (the Trainer's dicts).
    void set_log(std::unique_ptr<RunLog> log);
    RunLog& run_log() { return *log_; }
    // Windows skipped as non-finite (--skip-nonfinite), and by the loss scaler (inf/NaN gradients).
    std::int64_t skipped_updates() const { return skipped_updates_; }
    std::int64_t overflow_skips() const { return overflow_skips_; }
    // The threads the run uses now (the larger of its two pools): the default
    // adapts to the machine's other load (thread_tuner.h); the log says why.
    int threads() const { return std::max(threads_now_.intra_op, threads_now_.blas); }
    // The running gradient noise scale (training/noise_scale.h); NaN until measured.
    double noise_scale() const { return noise_ ? noise_->value() : std::numeric_limits<double>::quiet_NaN(); }

    // --- The calls the loops make, in the order they make them ---

    // Before each micro-batch: honours pause/stop, samples memory. False when the
    // run must stop. With several processes a pause or a stop is agreed at the
    // next gradient sync, and paused ranks wait together.
    bool proceed();
    // After the backward of micro-batch `index` of the epoch; `sync` when it ends
    // its window (the optimizer steps after it). Adds its loss to the window's,
    // sends its record at teaching pace, and waits the pace.
    void micro_batch_done(const ModelOutput& outputs, const Batch& batch, std::int64_t index, bool sync);
    // Once per window, after clipping and before optimizer.step(): closes the
    // window (its loss, over every rank's micro-batches) and says whether the
    // optimizer may step on it. With the loss scaler on, inf/NaN gradients are
    // the scaler's to skip (true here), unless the scale is already below 2^-24.
    // Otherwise a non-finite loss or `grad_norm` skips the window (false,
    // --skip-nonfinite, said in the log) or ends the run: DivergedError.
    bool end_window(double grad_norm);
    // After optimizer.step(), lr_scheduler.step() and zero_grad(), with
    // `done_in_epoch` micro-batches of the epoch finished: the step record, the
    // log line, evaluation and checkpoints by their strategies.
    void optimizer_step_done(std::int64_t done_in_epoch);
    // --max-steps was reached before the epoch's end: the loop ends here (its
    // last evaluation and checkpoint are made).
    bool max_steps_reached_mid_epoch() const;
    // At the end of an epoch: evaluation and checkpoint by epoch, or the final ones.
    void epoch_done();

    bool reached_max_steps() const { return total_updates() > 0 && progress_.global_step >= total_updates(); }
    EvalRecord evaluate();
    void log(const std::string& line);
    double elapsed_s() const;
    double fractional_epoch(std::int64_t done_in_epoch) const;

    // --- Memory, for the loops' records and the session ---

    // Counting starts: the budget applies from here on (on the CPU through the
    // counting allocator, on CUDA as the caching allocator's memory fraction),
    // and the parameters move into counted storage, as they would sit in device memory.
    void start_counting_memory(std::int64_t budget_bytes);
    // This process's memory now (rank set), with the peak since the previous
    // record and its parts (interval_peak_bytes, peak_*_bytes).
    MemoryRecord memory_record() const;
    // Sends memory_record(); rank 0 of a data-parallel run also sends every other
    // rank's figures as of the last gradient sync.
    void emit_memory_record();
    std::int64_t current_memory_bytes() const;
    std::int64_t run_peak_memory_bytes() const;
    // Parameters, gradients and optimizer state on the run's device now.
    memory::StaticMemory static_memory_now() const;

    // --- Checkpoints ---

    // Writes checkpoint-{global_step} now (outside the memory budget); its
    // directory, or "" when the run writes none (no --output-dir, --save-strategy
    // no, or no step yet). Every rank calls it; rank 0 writes.
    std::string save_checkpoint();
    // A completed run of a model from a TorchScript file: rank 0 writes the
    // trained module to output_dir/model.torchscript.pt (Python's torch.jit.load
    // reads it). Nothing for the built-in models or without --output-dir.
    void save_trained_module();
    // Restores a checkpoint written by save_checkpoint (--resume).
    void load_checkpoint(const std::string& dir);

private:
    CheckpointParts checkpoint_parts();
    // The allocator's peak since the last reading, and a new window from now.
    std::int64_t window_peak_and_reset();
    // The same peak, read without a reset.
    std::int64_t window_peak_now() const;
    bool checkpoint_due(bool epoch_end) const;
    // The window's loss sum so far (reads a GPU's part) and its divisor.
    double window_total() const;
    // What a micro-batch adds to the window: its mean loss and 1, or its token
    // loss sum and its label tokens (tokens).
    const torch::Tensor& window_part(const torch::Tensor& loss, const torch::Tensor& loss_sum) const {
        return uses_token_normalization() ? loss_sum : loss;
    }
    std::int64_t window_count(std::int64_t label_items) const { return uses_token_normalization() ? label_items : 1; }
    // Ends the window's accumulation: its loss (the ranks' when they agreed one).
    double close_window();
    // A window whose loss or gradient norm is not finite: skipped (false) or diverged (throws).
    bool judge_window(double loss, double grad_norm);
    std::vector<torch::Tensor> rng_states();
    // The thread count: said at the start, adapted between optimizer steps.
    void start_threads();
    void adapt_threads();
    void mark_step_start();

    const RunConfig config_;
    Sink& sink_;
    RunControl& control_;
    std::unique_ptr<RunParts> parts_;
    std::unique_ptr<dist::RankAgreement> ranks_; // several processes only
    std::unique_ptr<RunLog> log_;
    Progress progress_;
    std::int64_t skipped_updates_ = 0;
    std::int64_t overflow_skips_ = 0;
    std::int64_t budget_bytes_ = 0;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_memory_record_;
    // Window accumulators (tensors on a GPU, so the loop does not synchronise per micro-batch).
    torch::Tensor window_total_;       // sum of micro-batch mean losses, or of token losses (tokens), on a GPU
    double window_total_cpu_ = 0.0;    // the same sum, on the CPU
    std::int64_t window_divisor_ = 0;  // micro-batches, or label tokens (tokens)
    // What end_window measured, for the step record.
    double window_loss_ = 0.0;
    double window_grad_norm_ = 0.0;
    double window_learning_rate_ = 0.0;
    bool window_skipped_ = false;      // end_window said no (--skip-nonfinite)
    // The step's peak and its peak of activations, read after each backward and
    // after the optimizer step (ActivationPeakMeter), and the memory record's
    // interval peak with its parts (also read at each record and after evaluation).
    memory::ActivationPeakMeter peak_meter_;
    std::optional<memory::StaticMemory> window_static_; // after the window's first backward
    // The last micro-batch and its logits: the loops hold them through the
    // optimizer step (loop-body variables); they are not the step's temporaries.
    std::int64_t held_bytes_ = 0;
    std::int64_t cuda_run_peak_ = 0; // CUDA's peak statistic is reset per window: the run's, kept here
    std::int64_t last_eval_step_ = -1;
    std::int64_t last_saved_step_ = -1;
    bool writes_checkpoints_ = false;      // an output directory (rank 0's, in a data-parallel run)
    // The default thread count, adapted (none with --threads N, on CUDA, with
    // several processes or at teaching pace): each step's time since the last
    // step's end (evaluation and checkpoints left out) and the others' load,
    // read once a step (this process's own time, evaluation's too, is not in it).
    std::optional<ThreadTuner> tuner_;
    OtherLoadMeter other_load_;
    ComputeThreads threads_default_;
    ComputeThreads threads_now_;
    std::chrono::steady_clock::time_point step_start_;
    std::int64_t samples_at_step_start_ = 0;
    std::unique_ptr<NoiseScaleMeter> noise_;
};

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
