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
//           for inputs in batch_samples:
//               loss = compute_loss(model, inputs, num_items_in_batch)   # sum / num_items, or mean / num_batches
//               loss.backward()
//           clip_grad_norm_; optimizer.step(); lr_scheduler.step(); model.zero_grad()
//           global_step += 1; _maybe_log_save_evaluate()
#include "styles/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "accum/run_config.h"
#include "training/checkpoint.h"
#include "training/evaluation.h"
#include "training/run_context.h"

namespace accum {

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
    return a;
}

Trainer::Trainer(RunContext& ctx, TrainingArguments args) : ctx_(ctx), args_(std::move(args)) {
    ctx_.log_format = LogFormat::TrainerDict;
}

Metrics Trainer::evaluate() {
    const auto r = ctx_.evaluate(); // logs {'epoch': …, 'eval_loss': …, 'eval_accuracy': …, 'eval_f1': …}
    return Metrics{{"eval_loss", r.eval_loss}, {"eval_accuracy", r.eval_accuracy}, {"eval_f1", r.eval_f1}};
}

void Trainer::train(const std::string& resume_from_checkpoint) {
    if (!resume_from_checkpoint.empty()) load_checkpoint(ctx_, resume_from_checkpoint, &ctx_.log_history);
    inner_training_loop();
    if (ctx_.control.stop_requested()) return;
    const double runtime = ctx_.elapsed_s();
    const double train_loss = ctx_.progress.global_step ? ctx_.train_loss_sum / ctx_.progress.global_step : 0.0;
    char line[320];
    std::snprintf(line, sizeof line,
                  "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, "
                  "'train_loss': %.6f, 'epoch': %.2f}",
                  runtime, runtime > 0 ? ctx_.progress.samples_seen / runtime : 0.0,
                  runtime > 0 ? ctx_.progress.global_step / runtime : 0.0, train_loss,
                  ctx_.fractional_epoch(ctx_.progress.next_index));
    ctx_.log(line);
}

void Trainer::inner_training_loop() {
    auto& model = *ctx_.model;
    auto& optimizer = *ctx_.optimizer;
    auto& lr_scheduler = *ctx_.lr_scheduler;
    auto& epoch_iterator = *ctx_.train_loader;
    const std::int64_t K = args_.gradient_accumulation_steps;
    const bool token_normalised = ctx_.uses_token_normalization();

    for (std::int64_t epoch = ctx_.progress.epoch; epoch < ctx_.num_epochs(); ++epoch) {
        ctx_.begin_epoch(epoch);
        const std::int64_t steps_in_epoch = epoch_iterator.size();
        const std::int64_t total_updates = (steps_in_epoch + K - 1) / K;
        const std::int64_t remainder = steps_in_epoch % K == 0 ? K : steps_in_epoch % K;
        for (std::int64_t update_step = ctx_.progress.next_index / K; update_step < total_updates; ++update_step) {
            const std::int64_t num_batches = update_step != total_updates - 1 ? K : remainder;
            const std::int64_t first = update_step * K;
            // get_batch_samples: num_items_in_batch counts the label items of the whole window.
            const std::int64_t num_items_in_batch = epoch_iterator.items_in(first, first + num_batches);
            for (std::int64_t i = 0; i < num_batches; ++i) {
                if (!ctx_.proceed()) return;
                const std::int64_t step = first + i;
                const auto inputs = epoch_iterator.batch(step).to(ctx_.device);
                const bool do_sync_step = (step + 1) % K == 0 || step + 1 == steps_in_epoch;
                auto outputs = model.forward(inputs);
                // compute_loss: with num_items_in_batch the loss is sum / num_items (no
                // division by K); otherwise the mean is divided by the window's real size.
                auto loss = token_normalised ? outputs.loss_sum / static_cast<double>(num_items_in_batch)
                                             : outputs.loss / static_cast<double>(num_batches);
                loss.backward();
                ctx_.after_backward(outputs, inputs, static_cast<int>(i + 1), static_cast<int>(num_batches),
                                    do_sync_step);
            }
            const auto update = ctx_.before_optimizer_step(); // clip_grad_norm_ when max_grad_norm > 0
            if (!update.skip) { // optimizer_was_run
                optimizer.step();
                lr_scheduler.step();
            }
            zero_grad(optimizer);
            ctx_.after_optimizer_step(update, first + num_batches); // global_step += 1, log, evaluate, save
            if (ctx_.max_steps_reached_mid_epoch(first + num_batches)) return;
        }
        ctx_.end_epoch(); // evaluate when eval_strategy == "epoch", save when save_strategy == "epoch"
    }
}

void run_trainer_style(RunContext& ctx) {
    const auto args = TrainingArguments::from(ctx.config);
    Trainer trainer(ctx, args);
    trainer.train(ctx.config.resume_from);
}

} // namespace accum
