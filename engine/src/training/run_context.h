#pragma once
// What every style's loop stands on: the data, model, optimizer and scheduler
// built from the config, and the bookkeeping that turns micro-batches into
// records (step, eval, memory), log lines and checkpoints behind a few
// well-named calls, so that the loop a learner reads in the code panel is the
// loop that runs.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "accum/records.h"
#include "accum/run_config.h"
#include "accum/sink.h"
#include "data/data_loader.h"
#include "data/dataset.h"
#include "memory/memory_categories.h"
#include "models/model.h"
#include "training/control.h"
#include "training/grad_scaler.h"
#include "training/lr_scheduler.h"
#include "training/mixed_precision.h"

namespace accum {

class RunContext;
namespace dist {
class DistributedState;
}

// What the loop has done so far; enough to resume at a window boundary.
struct Progress {
    std::int64_t epoch = 0;           // current epoch (0-based)
    std::int64_t next_index = 0;      // next micro-batch index in that epoch
    std::int64_t global_step = 0;     // optimizer steps
    std::int64_t micro_steps = 0;
    std::int64_t samples_seen = 0;
    double elapsed_before_s = 0.0;    // training time of earlier (resumed) sessions
    double last_loss = std::nan("");
    // The counters as they were after the last optimizer step (what a checkpoint records).
    std::int64_t micro_steps_at_step = 0;
    std::int64_t samples_at_step = 0;
};

// The run's optimizer as the loops call it. zero_grad() is PyTorch 2's
// (set_to_none=True): each .grad is released, so the next backward stores its
// gradient instead of adding it to a tensor of zeros. LibTorch 1.13's
// Optimizer::zero_grad() still writes zeros.
class Optimizer {
public:
    explicit Optimizer(std::unique_ptr<torch::optim::Optimizer> impl) : impl_(std::move(impl)) {}
    void step() { impl_->step(); }
    void zero_grad();
    torch::optim::Optimizer& impl() { return *impl_; }

private:
    std::unique_ptr<torch::optim::Optimizer> impl_;
};

// The run's loss scaler as the loops call it, torch.amp.GradScaler's four calls
// on the run's Optimizer:
//
//   scaler.scale(loss).backward();   // every micro-batch: loss × S
//   scaler.unscale_(optimizer);      // on the sync micro-batch, before clipping
//   scaler.step(optimizer);          // steps unless a gradient is inf/NaN; returns whether it stepped
//   scaler.update();                 // once per window: S × ½ after an overflow, × 2 after 2000 good windows
//
// Off (no --loss-scaling dynamic, no fp16), every call passes through, as
// GradScaler(enabled=False): scale() returns the loss, step() steps. It keeps
// what the step record reports: the scale of the window and whether its update
// was skipped, as of the last update(). The scale changes only in update() (and
// load_state_dict()): it is read from its tensor there, once, not at every
// get_scale() (a device synchronisation on CUDA).
class LossScaler {
public:
    explicit LossScaler(GradScalerOptions options = {});
    bool is_enabled() const { return impl_.is_enabled(); }
    torch::Tensor scale(const torch::Tensor& loss) { return impl_.scale(loss); }
    void unscale_(Optimizer& optimizer);
    bool step(Optimizer& optimizer);
    void update();
    double get_scale() const { return scale_; }
    void load_state_dict(const GradScalerState& state);
    const GradScaler& impl() const { return impl_; }

    // How often the gradients were divided by S (unscale_, or step() doing it): once per window.
    std::int64_t unscale_count() const { return unscales_; }
    // The scale the last window ran with (before its update()), 1 when off, and
    // whether its step() found an inf/NaN gradient and skipped the optimizer.
    double window_scale() const { return window_scale_; }
    bool window_skipped() const { return window_skipped_; }

private:
    GradScaler impl_;
    double scale_;         // impl_'s scale, as of the last change
    std::int64_t unscales_ = 0;
    bool skipped_ = false; // step() skipped since the last update()
    double window_scale_ = 1.0;
    bool window_skipped_ = false;
};

// torch.nn.utils.clip_grad_norm_: scales the gradients so that their joint norm
// is at most max_norm, and returns the norm before clipping. max_norm 0 measures
// the norm without clipping (the record of every step carries it).
double clip_grad_norm_(const std::vector<torch::Tensor>& parameters, double max_norm);

// How a style's log lines read, and the state it keeps for them: the plain
// loop's lines by default; the Trainer installs its own (styles/trainer.cpp).
class RunLog {
public:
    virtual ~RunLog() = default;
    // After every optimizer step (the log decides its own cadence).
    virtual void on_step(RunContext& ctx, const StepRecord& step) = 0;
    virtual void on_eval(RunContext& ctx, const EvalRecord& eval) = 0;
    // What a checkpoint keeps of the log (trainer_state.json), and restoring it.
    virtual nlohmann::json state() const { return nlohmann::json::object(); }
    virtual void restore(const nlohmann::json& /*state*/) {}
};

class RunContext {
public:
    RunContext(const RunConfig& config, Sink& sink, RunControl& control);
    ~RunContext();

    const RunConfig config;
    Sink& sink;
    RunControl& control;
    torch::Device device;
    DataSplits data;
    std::unique_ptr<DataLoader> train_loader;
    std::unique_ptr<DataLoader> eval_loader;
    std::shared_ptr<Model> model;
    std::unique_ptr<Optimizer> optimizer;
    std::unique_ptr<LrScheduler> lr_scheduler;
    // GradScaler for --loss-scaling dynamic or fp16; otherwise it passes every call through.
    std::unique_ptr<LossScaler> scaler;
    Progress progress;
    std::int64_t skipped_updates = 0; // windows skipped as non-finite (--skip-nonfinite)
    std::int64_t overflow_skips = 0;  // windows the loss scaler skipped (inf/NaN gradients)

    // Data parallel (the session's default state for this thread when the run
    // has several processes): this process's rank and the number of processes;
    // 0 and 1 otherwise. Only rank 0 writes records, logs and checkpoints.
    int rank() const;
    int world_size() const;
    bool is_main_process() const { return rank() == 0; }
    dist::DistributedState* distributed() const;
    // The run ends early: a stop requested (one process), or agreed by the ranks
    // at a gradient sync (several: they stop together, after that window).
    bool stopped() const;

    std::int64_t micro_batches_per_epoch() const { return train_loader->size(); }
    std::int64_t updates_per_epoch() const;   // ceil(L / K)
    std::int64_t total_updates() const { return total_updates_; }
    std::int64_t num_epochs() const { return num_epochs_; }
    bool uses_token_normalization() const { return config.loss_normalization == LossNormalization::Tokens; }
    // Replaces the plain log lines (the Trainer's dicts).
    void set_log(std::unique_ptr<RunLog> log);
    RunLog& run_log() { return *log_; }

    // Before each micro-batch: honours pause/stop, samples memory. False when the
    // run must stop. With several processes a pause or a stop is agreed at the
    // next gradient sync, and paused ranks wait together.
    bool proceed();

    // After the backward of micro-batch `index` of the epoch; `sync` when it ends
    // its window (the optimizer steps after it). Adds its loss to the window's,
    // sends its record at teaching pace, and waits the pace.
    void micro_batch_done(const ModelOutput& outputs, const Batch& batch, std::int64_t index, bool sync);
    // Once per window, after clipping and before optimizer.step(): the window's
    // loss and `grad_norm` are finite, so the optimizer may step. Otherwise the
    // window is skipped (false; --skip-nonfinite, as GradScaler skips) or the run
    // ends as diverged (throws DivergedError). With the loss scaler on, the
    // gradients are its to judge: inf/NaN gradients after unscale_ are an overflow,
    // which scaler.step() skips and scaler.update() answers by halving the scale
    // (true here), unless the scale has already fallen below 2^-24, where no scale
    // makes them finite.
    bool window_is_finite(double grad_norm);
    // After optimizer.step(), lr_scheduler.step() and zero_grad(), with
    // `done_in_epoch` micro-batches of the epoch finished: the step record, the
    // log, evaluation and checkpoints by their strategies. False when --max-steps
    // is reached inside an epoch: the loop must end there.
    bool optimizer_step_done(std::int64_t done_in_epoch);
    // At the end of an epoch: evaluation and checkpoint by epoch, or the final ones.
    void epoch_done();

    bool reached_max_steps() const { return total_updates_ > 0 && progress.global_step >= total_updates_; }
    EvalRecord evaluate();
    void log(const std::string& line);
    double elapsed_s() const;
    double fractional_epoch(std::int64_t done_in_epoch) const;
    // This process's memory now (rank set).
    MemoryRecord memory_record() const;
    // Sends memory_record(); rank 0 of a data-parallel run also sends every other
    // rank's figures as of the last gradient sync.
    void emit_memory_record();
    std::int64_t current_memory_bytes() const;
    std::int64_t run_peak_memory_bytes() const;
    // Parameters, gradients and optimizer state on the run's device now.
    memory::StaticMemory static_memory_now() const;
    // Writes checkpoint-{global_step} now (outside the memory budget); its
    // directory, or "" when the run writes none (no --output-dir, --save-strategy
    // no, or no step yet).
    std::string save_checkpoint();
    // Restores a checkpoint written by save_checkpoint (--resume).
    void load_checkpoint(const std::string& dir);

private:
    struct DataParallel; // the bookkeeping of a run of several processes (run_context.cpp)
    void build();
    void join_data_parallel();
    std::vector<torch::Tensor> rng_states();
    // The allocator's peak since the last reading, and a new window from now.
    std::int64_t window_peak_and_reset();
    bool checkpoint_due(bool epoch_end) const;
    void evaluate_and_save(bool epoch_end);

    std::unique_ptr<RunLog> log_;
    std::int64_t total_updates_ = 0;
    std::int64_t num_epochs_ = 0;
    std::int64_t budget_bytes_ = 0;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_memory_record_;
    // Window accumulators (tensors on a GPU, so the loop does not synchronise per micro-batch).
    torch::Tensor window_total_;       // sum of micro-batch mean losses, or of token losses (tokens), on a GPU
    double window_total_cpu_ = 0.0;    // the same sum, on the CPU
    std::int64_t window_divisor_ = 0;  // micro-batches, or label tokens (tokens)
    // What a micro-batch adds to them: its mean loss and 1, or its token loss
    // sum and its label tokens (tokens).
    const torch::Tensor& window_part(const torch::Tensor& loss, const torch::Tensor& loss_sum) const {
        return uses_token_normalization() ? loss_sum : loss;
    }
    std::int64_t window_count(std::int64_t label_items) const { return uses_token_normalization() ? label_items : 1; }
    // The window's sum so far (reads a GPU's part).
    double window_total() const;
    // What window_is_finite measured, for the step record.
    double window_loss_ = 0.0;
    double window_grad_norm_ = 0.0;
    double window_learning_rate_ = 0.0;
    bool window_skipped_ = false;      // window_is_finite said no (--skip-nonfinite)
    // The step's peak and its peak of activations, read after each backward and
    // after the optimizer step (ActivationPeakMeter).
    memory::ActivationPeakMeter peak_meter_;
    std::optional<memory::StaticMemory> window_static_; // after the window's first backward
    std::int64_t cuda_run_peak_ = 0; // CUDA's peak statistic is reset per window: the run's, kept here
    std::int64_t last_eval_step_ = -1;
    std::int64_t last_saved_step_ = -1;
    bool writes_checkpoints_ = false;      // an output directory (rank 0's, in a data-parallel run)
    std::unique_ptr<DataParallel> dp_;
};

} // namespace accum
