#pragma once
// What every style's loop stands on: the data, model, optimizer and scheduler
// built from the config, and the bookkeeping that turns micro-batches into
// records (step, eval, memory) without getting in the loop's way.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include "accum/records.h"
#include "accum/run_config.h"
#include "accum/sink.h"
#include "data/data_loader.h"
#include "data/dataset.h"
#include "models/model.h"
#include "training/control.h"
#include "training/lr_scheduler.h"

namespace accum {

// Thrown when a window's loss or gradient is not finite.
class DivergedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// How the loop's stdout lines read.
enum class LogFormat { Plain, TrainerDict };

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

// What before_optimizer_step measured about the finished window.
struct WindowUpdate {
    double loss = 0.0;            // window loss, unscaled
    double grad_norm = 0.0;       // before clipping
    double learning_rate = 0.0;   // the rate this step uses
    bool skip = false;            // non-finite window skipped (--skip-nonfinite): no optimizer/scheduler step
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
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    std::unique_ptr<LrScheduler> lr_scheduler;
    Progress progress;
    LogFormat log_format = LogFormat::Plain;
    std::int64_t skipped_updates = 0;

    std::int64_t micro_batches_per_epoch() const { return train_loader->size(); }
    std::int64_t updates_per_epoch() const;   // ceil(L / K)
    std::int64_t total_updates() const { return total_updates_; }
    std::int64_t num_epochs() const { return num_epochs_; }
    bool uses_token_normalization() const { return config.loss_normalization == "tokens"; }

    // Before each micro-batch: honours pause/stop, samples memory, applies the
    // teaching pace. False when the run must stop.
    bool proceed();

    // After a micro-batch's backward. `window_index` is 1..window_size.
    void after_backward(const ModelOutput& outputs, const Batch& batch, int window_index, int window_size, bool sync);
    // Before optimizer.step(): window loss, gradient norm, clipping (once per
    // window), divergence check. Throws DivergedError.
    WindowUpdate before_optimizer_step();
    // After optimizer.step(), scheduler.step(), zero_grad(): the step record,
    // the log line, evaluation by steps. `done_in_epoch` micro-batches of the
    // epoch are finished.
    void after_optimizer_step(const WindowUpdate& update, std::int64_t done_in_epoch);
    bool reached_max_steps() const { return total_updates_ > 0 && progress.global_step >= total_updates_; }
    // --max-steps reached inside an epoch: leave the loop now. At an epoch's end
    // the loop falls through to end_epoch() (evaluation, checkpoint) instead.
    bool max_steps_reached_mid_epoch(std::int64_t done_in_epoch) const {
        return reached_max_steps() && done_in_epoch < micro_batches_per_epoch();
    }
    // At the end of an epoch: evaluation by epoch and its log line.
    void end_epoch();
    void begin_epoch(std::int64_t epoch);

    EvalRecord evaluate();
    // After a run that stopped at --max-steps inside an epoch: the evaluation it missed.
    void final_evaluation_if_missed();
    void log(const std::string& line);
    double elapsed_s() const;
    double fractional_epoch(std::int64_t done_in_epoch) const;
    void emit_memory_record();
    std::int64_t current_memory_bytes() const;
    std::int64_t run_peak_memory_bytes() const;

    // The Trainer logs the mean loss since its last log line.
    double loss_since_last_log();
    // Checkpoint when --save-strategy says so (needs --output-dir).
    void maybe_save(bool epoch_end);
    std::string save_now();
    std::vector<std::string> log_history; // Trainer-style log entries (JSON objects)
    double best_metric = std::nan("");    // lowest eval_loss so far
    double train_loss_sum = 0.0;          // sum of window losses (for train_loss)

private:
    void build();
    std::int64_t step_peak_and_reset();
    std::string plain_step_line(const StepRecord& r); // also moves the samples/s reference point

    std::int64_t total_updates_ = 0;
    std::int64_t num_epochs_ = 0;
    std::int64_t budget_bytes_ = 0;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_memory_record_;
    // Window accumulators (tensors, so the loop does not synchronise per micro-batch).
    torch::Tensor window_total_;       // sum of micro-batch mean losses, or of token losses (tokens), on a GPU
    double window_total_cpu_ = 0.0;    // the same sum, on the CPU
    std::int64_t window_divisor_ = 0;  // micro-batches, or label tokens (tokens)
    double loss_log_sum_ = 0.0;
    std::int64_t loss_log_count_ = 0;
    std::int64_t samples_at_last_log_ = 0;
    std::int64_t last_eval_step_ = -1;
    double time_at_last_log_ = 0.0;
};

// Norm of all gradients (as clip_grad_norm_ computes it).
double gradient_norm(const std::vector<torch::Tensor>& parameters);

// optimizer.zero_grad() as PyTorch 2 does it (set_to_none=True): each .grad is
// released, so the next backward stores its gradient instead of adding it to a
// tensor of zeros (one memset and one add pass over every gradient saved per
// update). LibTorch 1.13's Optimizer::zero_grad() still writes zeros.
void zero_grad(torch::optim::Optimizer& optimizer);

} // namespace accum
