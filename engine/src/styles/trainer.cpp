// The Trainer style. Read beside the Python it mirrors:
//
//   args = TrainingArguments(output_dir="out", eval_strategy="epoch",
//                            per_device_train_batch_size=B, gradient_accumulation_steps=K, ...)
//   trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=eval,
//                     compute_metrics=compute_metrics)
//   trainer.train()
//
// and inside train(), as in transformers' _inner_training_loop:
//
//   for epoch in range(num_train_epochs):
//       for update_step in range(total_updates):          # ceil(L / K)
//           num_batches = K, or the remainder in the last window
//           batch_samples, num_items_in_batch = get_batch_samples(epoch_iterator, num_batches)
//           for i, inputs in enumerate(batch_samples):
//               context = accelerator.no_sync if i != len(batch_samples) - 1 else nullcontext
//               with context(model):                                 # sync on the window's last
//                   with autocast:                                   # bf16=True / fp16=True
//                       loss = compute_loss(model, inputs, num_items_in_batch)   # sum / num_items, or mean / num_batches
//                   accelerator.backward(loss)                       # scaler.scale(loss).backward() with a scaler
//           accelerator.clip_grad_norm_(...)                         # scaler.unscale_(optimizer) first
//           optimizer.step()                                         # scaler.step(optimizer); scaler.update()
//           optimizer_was_run = not accelerator.optimizer_step_was_skipped
//           if optimizer_was_run: lr_scheduler.step()
//           model.zero_grad()
//           global_step += 1; _maybe_log_save_evaluate()
//
// The region between the listing marks is what the studio's code panel shows.
#include "styles/trainer.h"
#include "styles/styles.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "distributed/data_parallel.h"
#include "training/python_format.h"
#include "training/mixed_precision.h"
#include "training/run_context.h"

namespace accum {

namespace {

using nlohmann::json;

// A Python dict literal of (key, value) pairs: {'loss': 0.5, 'epoch': 1.0}.
std::string python_dict(std::initializer_list<std::pair<const char*, double>> items) {
    std::string out = "{";
    for (const auto& [key, value] : items) {
        if (out.size() > 1) out += ", ";
        out += std::string("'") + key + "': " + python_float(value);
    }
    return out + "}";
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(); }

// The Trainer's state and log lines (TrainerState.log_history, best_metric, the
// loss since the last log): {'loss': …, 'grad_norm': …, 'learning_rate': …,
// 'epoch': …} every args.logging_steps optimizer steps, and the evaluation's dict,
// with the keys, their order and the cadence of Transformers 5.24's Trainer
// (tests/peers compares them with the real one). The values print as Python's
// repr of the float; the real Trainer's console callbacks print them as
// f"{v:.4g}" strings, and its log_history, as ours, keeps the numbers.
class TrainerLog final : public RunLog {
public:
    explicit TrainerLog(std::int64_t logging_steps) : logging_steps_(logging_steps > 0 ? logging_steps : 1) {}

    std::optional<std::string> on_step(const StepRecord& r, const StepPosition&) override {
        tr_loss_ += r.loss;
        ++steps_since_log_;
        total_loss_ += r.loss;
        session_loss_ += r.loss;
        ++session_steps_;
        if (r.step % logging_steps_ != 0) return std::nullopt; // _maybe_log_save_evaluate: should_log
        // The mean since the last line, unrounded: Transformers 5 logs it so (4.x rounded to 4 decimals).
        const double loss = tr_loss_ / static_cast<double>(steps_since_log_);
        tr_loss_ = 0;
        steps_since_log_ = 0;
        log_history_.push_back(json{{"loss", number_or_null(loss)}, {"grad_norm", number_or_null(r.grad_norm)},
                                    {"learning_rate", r.learning_rate}, {"epoch", r.epoch}, {"step", r.step}});
        return python_dict(
            {{"loss", loss}, {"grad_norm", r.grad_norm}, {"learning_rate", r.learning_rate}, {"epoch", r.epoch}});
    }

    // evaluate(): evaluation_loop's metrics (eval_loss first, then compute_metrics'
    // keys prefixed), speed_metrics("eval", …) (runtime rounded to 4 decimals, the
    // rates to 3), and log() adds the epoch last.
    std::optional<std::string> on_eval(const EvalRecord& r) override {
        if (!(best_metric_ <= r.eval_loss)) best_metric_ = r.eval_loss;
        const double runtime = python_round(r.runtime_s, 4);
        const double samples_per_second = r.runtime_s > 0 ? python_round(static_cast<double>(r.samples) / r.runtime_s, 3) : 0.0;
        const double steps_per_second = r.runtime_s > 0 ? python_round(static_cast<double>(r.batches) / r.runtime_s, 3) : 0.0;
        log_history_.push_back(json{{"eval_loss", number_or_null(r.eval_loss)}, {"eval_accuracy", r.eval_accuracy},
                                    {"eval_f1", r.eval_f1}, {"eval_runtime", runtime},
                                    {"eval_samples_per_second", samples_per_second},
                                    {"eval_steps_per_second", steps_per_second}, {"epoch", r.epoch}, {"step", r.step}});
        return python_dict({{"eval_loss", r.eval_loss}, {"eval_accuracy", r.eval_accuracy}, {"eval_f1", r.eval_f1},
                            {"eval_runtime", runtime}, {"eval_samples_per_second", samples_per_second},
                            {"eval_steps_per_second", steps_per_second}, {"epoch", r.epoch}});
    }

    json state() const override {
        return json{{"log_history", log_history_},
                    {"best_metric", number_or_null(best_metric_)},
                    {"total_loss", total_loss_}};
    }

    void restore(const json& state) override {
        if (state.contains("log_history") && state["log_history"].is_array()) log_history_ = state["log_history"];
        if (state.contains("best_metric") && state["best_metric"].is_number())
            best_metric_ = state["best_metric"].get<double>();
        if (state.contains("total_loss") && state["total_loss"].is_number())
            total_loss_ = state["total_loss"].get<double>();
    }

    // _finalize_training's train_loss: the mean window loss of the steps this
    // train() ran (a resumed run's, not the whole run's: _total_loss_scalar
    // starts at 0 in every _inner_training_loop).
    double train_loss() const {
        return session_steps_ > 0 ? session_loss_ / static_cast<double>(session_steps_) : 0.0;
    }

private:
    std::int64_t logging_steps_;
    json log_history_ = json::array();
    double best_metric_ = std::nan("");
    double tr_loss_ = 0.0;           // window losses since the last log line
    std::int64_t steps_since_log_ = 0;
    double total_loss_ = 0.0;        // all window losses (kept in checkpoints)
    double session_loss_ = 0.0;      // the window losses of this train() (train_loss)
    std::int64_t session_steps_ = 0;
};

} // namespace

TrainingArguments TrainingArguments::from(const RunConfig& c) {
    TrainingArguments a;
    a.output_dir = c.output_dir;
    a.eval_strategy = c.eval_strategy;
    a.eval_steps = c.eval_steps;
    a.per_device_train_batch_size = c.batch_size;
    a.gradient_accumulation_steps = c.accumulation_steps;
    a.learning_rate = c.learning_rate;
    a.num_train_epochs = c.epochs;
    a.max_steps = c.max_steps > 0 ? c.max_steps : -1;
    a.warmup_steps = c.warmup_steps;
    a.lr_scheduler_type = c.scheduler;
    a.weight_decay = c.weight_decay;
    a.max_grad_norm = c.max_grad_norm;
    a.logging_steps = c.logging_steps;
    a.save_strategy = c.save_strategy;
    a.save_steps = c.save_steps;
    a.save_total_limit = c.save_total_limit;
    a.seed = c.seed;
    a.auto_find_batch_size = c.auto_find_batch_size;
    a.bf16 = c.mixed_precision == MixedPrecision::Bf16;
    a.fp16 = c.mixed_precision == MixedPrecision::Fp16;
    return a;
}

Trainer::Trainer(RunContext& ctx, TrainingArguments args) : ctx_(ctx), args_(std::move(args)) {
    ctx_.set_log(std::make_unique<TrainerLog>(args_.logging_steps));
}

Metrics Trainer::evaluate() {
    const auto r = ctx_.evaluate(); // logs {'eval_loss': …, 'eval_accuracy': …, 'eval_f1': …, …, 'epoch': …}
    return Metrics{{"eval_loss", r.eval_loss}, {"eval_accuracy", r.eval_accuracy}, {"eval_f1", r.eval_f1}};
}

void Trainer::train(const std::string& resume_from_checkpoint) {
    if (!resume_from_checkpoint.empty()) ctx_.load_checkpoint(resume_from_checkpoint);
    inner_training_loop();
    if (ctx_.stopped()) return;
    // speed_metrics("train", …) and train_loss, as the Trainer's last line.
    const double runtime = ctx_.elapsed_s();
    const auto& log = static_cast<const TrainerLog&>(ctx_.run_log());
    const auto& progress = ctx_.progress();
    const auto steps = progress.global_step;
    ctx_.log(python_dict(
        {{"train_runtime", python_round(runtime, 4)},
         {"train_samples_per_second", python_round(runtime > 0 ? progress.samples_seen / runtime : 0.0, 3)},
         {"train_steps_per_second", python_round(runtime > 0 ? steps / runtime : 0.0, 3)},
         {"train_loss", log.train_loss()},
         {"epoch", ctx_.fractional_epoch(progress.next_index)}}));
}

void Trainer::inner_training_loop() {
    using dist::nullcontext;
    dist::DistributedDataParallel model(ctx_.model()); // model = self._wrap_model(self.model_wrapped)
    auto& optimizer = ctx_.optimizer();
    auto& lr_scheduler = ctx_.lr_scheduler();
    auto& epoch_iterator = ctx_.train_loader();
    const auto& device = ctx_.device();
    const auto num_train_epochs = ctx_.num_epochs();
    const bool token_loss = ctx_.uses_token_normalization();
    const int num_processes = ctx_.world_size();
    const bool sync_each_batch = ctx_.config().sync_each_micro_batch; // the pitfall
    const auto precision = args_.bf16 ? MixedPrecision::Bf16 : args_.fp16 ? MixedPrecision::Fp16 : MixedPrecision::No;
    auto& scaler = ctx_.scaler();                         // passes every call through without loss scaling

    // listing:begin
    const std::int64_t K = args_.gradient_accumulation_steps;
    for (auto epoch = ctx_.progress().epoch; epoch < num_train_epochs; ++epoch) {
        model.train();
        epoch_iterator.set_epoch(epoch);                     // this epoch's shuffle
        const std::int64_t steps_in_epoch = epoch_iterator.size();
        const std::int64_t total_updates = (steps_in_epoch + K - 1) / K;
        const std::int64_t remainder = steps_in_epoch % K == 0 ? K : steps_in_epoch % K;
        for (auto update_step = ctx_.progress().next_index / K; update_step < total_updates; ++update_step) {
            const std::int64_t num_batches = update_step != total_updates - 1 ? K : remainder;
            const std::int64_t first = update_step * K;
            // get_batch_samples: num_items_in_batch counts the label items of the whole window.
            const double num_items_in_batch = epoch_iterator.items_in(first, first + num_batches);
            for (std::int64_t i = 0; i < num_batches; ++i) {
                if (!ctx_.proceed()) return;                 // Pause and Stop
                const std::int64_t step = first + i;
                const auto inputs = epoch_iterator.batch(step).to(device);
                const bool do_sync_step = i + 1 == num_batches;
                auto context = do_sync_step || sync_each_batch ? nullcontext() : model.no_sync();  //@no_sync
                ModelOutput outputs;
                torch::Tensor loss;
                {
                    AutocastScope autocast(device.type(), precision);                      //@autocast
                    outputs = model(inputs);                                               //@forward
                    loss = token_loss ? outputs.loss_sum * num_processes / num_items_in_batch  //@scale
                                      : outputs.loss / num_batches;       // compute_loss  //@scale
                }
                scaler.scale(loss).backward();   // accelerator.backward(loss); synced last  //@backward,all_reduce
                ctx_.micro_batch_done(outputs, inputs, step, do_sync_step);
            }
            scaler.unscale_(optimizer);                      // clip_grad_norm_ unscales first  //@unscale
            const double grad_norm = clip_grad_norm_(model.parameters(), args_.max_grad_norm);
            bool optimizer_was_run = false;
            if (ctx_.end_window(grad_norm))
                optimizer_was_run = scaler.step(optimizer);  // not optimizer_step_was_skipped  //@step
            scaler.update();                                                               //@update
            if (optimizer_was_run) lr_scheduler.step();                                    //@scheduler
            model.zero_grad();                                                             //@zero_grad
            // global_step += 1; _maybe_log_save_evaluate(): log, evaluate, save
            ctx_.optimizer_step_done(first + num_batches);
            if (ctx_.max_steps_reached_mid_epoch()) return;
        }
        ctx_.epoch_done();                                   // evaluate and save by epoch
    }
    // listing:end
}

void run_trainer_style(RunContext& ctx) {
    const auto args = TrainingArguments::from(ctx.config());
    Trainer trainer(ctx, args);
    trainer.train(ctx.config().resume_from);
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
