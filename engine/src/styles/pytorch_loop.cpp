// The plain PyTorch loop. Read it beside the Python it mirrors:
//
//   for epoch in range(num_epochs):
//       model.train()
//       for index, batch in enumerate(train_loader):
//           outputs = model(batch["input_ids"], labels=batch["labels"])
//           loss = outputs.loss / gradient_accumulation_steps
//           loss.backward()
//           if (index + 1) % gradient_accumulation_steps == 0 or index + 1 == len(train_loader):
//               optimizer.step()
//               lr_scheduler.step()
//               optimizer.zero_grad()
//
// One choice the Python snippet leaves open: when an epoch's L micro-batches
// are not a multiple of K, the last partial window is flushed (the optimizer
// steps at the end of the epoch) rather than carried into the next epoch. Its
// loss is still divided by K, as Accelerate does, so that window's update is
// r/K of a full one. That gives ceil(L/K) updates per epoch and windows that
// start afresh every epoch.
//
// With --loss-normalization tokens the loss is the sum of token losses divided
// by num_items_in_batch, the label-token count of the whole window (the 2024
// Transformers fix), instead of each micro-batch's mean divided by K.
#include "styles/pytorch_loop.h"

#include <algorithm>

#include "training/run_context.h"

namespace accum {

void run_pytorch_loop(RunContext& ctx) {
    auto& model = *ctx.model;
    auto& optimizer = *ctx.optimizer;
    auto& lr_scheduler = *ctx.lr_scheduler;
    auto& train_loader = *ctx.train_loader;
    const std::int64_t gradient_accumulation_steps = ctx.config.accumulation_steps;
    const bool token_normalised = ctx.uses_token_normalization();
    double num_items_in_batch = 1; // label tokens of the current window (token normalisation)

    for (std::int64_t epoch = ctx.progress.epoch; epoch < ctx.num_epochs(); ++epoch) {
        ctx.begin_epoch(epoch);                                   // model.train()
        const std::int64_t L = train_loader.size();               // len(train_loader)
        for (std::int64_t index = ctx.progress.next_index; index < L; ++index) {
            if (!ctx.proceed()) return;                           // Stop / Pause from the studio
            const auto batch = train_loader.batch(index).to(ctx.device);
            const std::int64_t window_start = index - index % gradient_accumulation_steps;
            const std::int64_t window_end = std::min(window_start + gradient_accumulation_steps, L);

            if (token_normalised && index == window_start)
                num_items_in_batch = static_cast<double>(train_loader.items_in(window_start, window_end));

            auto outputs = model.forward(batch);                  // outputs = model(inputs, labels=targets)
            auto loss = token_normalised ? outputs.loss_sum / num_items_in_batch
                                         : outputs.loss / static_cast<double>(gradient_accumulation_steps);
            loss.backward();                                      // loss.backward()

            const bool sync = (index + 1) % gradient_accumulation_steps == 0 || index + 1 == L;
            // The pitfall: a scheduler stepped per micro-batch runs K times too fast.
            if (ctx.config.scheduler_per_micro_batch && !sync) lr_scheduler.step();
            ctx.after_backward(outputs, batch, static_cast<int>(index - window_start + 1),
                               static_cast<int>(window_end - window_start), sync);
            if (sync) {
                const auto update = ctx.before_optimizer_step();  // clip once per window, grad norm
                if (!update.skip) {                               // (--skip-nonfinite, as GradScaler)
                    optimizer.step();                             // optimizer.step()
                    lr_scheduler.step();                          // lr_scheduler.step()
                }
                zero_grad(optimizer);                             // optimizer.zero_grad()
                ctx.after_optimizer_step(update, index + 1);
                if (ctx.max_steps_reached_mid_epoch(index + 1)) return;
            }
        }
        ctx.end_epoch();
    }
}

} // namespace accum
