// The plain PyTorch loop. The region between the listing marks is what the
// studio's code panel shows, line for line (resources/code/CMakeLists.txt
// extracts it at build time; a trailing //@role names the role a line plays for
// the panel's highlighting). Read it beside the Python it mirrors:
//
//   for epoch in range(num_epochs):
//       model.train()
//       for index, batch in enumerate(train_loader):
//           with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_amp):
//               outputs = model(batch["input_ids"], labels=batch["labels"])
//               loss = outputs.loss / gradient_accumulation_steps
//           scaler.scale(loss).backward()
//           if (index + 1) % gradient_accumulation_steps == 0 or index + 1 == len(train_loader):
//               scaler.unscale_(optimizer)
//               torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
//               scaler.step(optimizer)          # skipped when a gradient is inf/NaN
//               scaler.update()
//               lr_scheduler.step()             # (not after a skipped step)
//               optimizer.zero_grad()
//
// which is PyTorch's AMP recipe for gradient accumulation: the scale S stays
// the same inside a window, unscale_ runs once, on the window's last micro-batch
// and before clipping (so clipping sees the true gradients), and update() once
// per window. Without --mixed-precision the autocast scope is off, and without
// --loss-scaling dynamic (or fp16) the scaler passes every call through, as
// torch.amp.GradScaler(enabled=False) does.
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
//
// With several processes (--nproc-per-node) the model is wrapped as in
// PyTorch's DistributedDataParallel documentation, and the gradients are
// averaged across the processes once per window:
//
//   model = DistributedDataParallel(model)
//   ...
//           sync = (index + 1) % K == 0 or index + 1 == len(train_loader)
//           with model.no_sync() if not sync else nullcontext():
//               outputs = model(...); loss = outputs.loss / K
//               loss.backward()          # on sync: .grad averaged across processes
//
// (a token loss is multiplied by the number of processes, which the average
// divides out). With one process the wrapper changes nothing.
#include "styles/styles.h"

#include <algorithm>

#include "distributed/data_parallel.h"
#include "training/mixed_precision.h"
#include "training/run_context.h"

namespace accum {

void run_pytorch_loop(RunContext& ctx) {
    using dist::nullcontext;
    dist::DistributedDataParallel model(ctx.model()); // model = DistributedDataParallel(model)
    auto& optimizer = ctx.optimizer();
    auto& lr_scheduler = ctx.lr_scheduler();
    auto& train_loader = ctx.train_loader();
    const auto& device = ctx.device();
    const auto num_epochs = ctx.num_epochs();
    const double max_grad_norm = ctx.config().max_grad_norm;
    const bool token_loss = ctx.uses_token_normalization();
    double num_items_in_batch = 1; // label tokens of the current window (token loss)
    const int world_size = ctx.world_size();
    const bool sync_each_micro_batch = ctx.config().sync_each_micro_batch; // the pitfall
    const auto precision = ctx.config().mixed_precision; // no, bf16 or fp16
    auto& scaler = ctx.scaler();

    // listing:begin
    const std::int64_t K = ctx.config().accumulation_steps;  // gradient_accumulation_steps
    for (auto epoch = ctx.progress().epoch; epoch < num_epochs; ++epoch) {
        model.train();
        train_loader.set_epoch(epoch);                       // this epoch's shuffle
        const auto L = train_loader.size();                  // len(train_loader)
        for (auto index = ctx.progress().next_index; index < L; ++index) {
            if (!ctx.proceed()) return;                      // Pause and Stop
            const auto batch = train_loader.batch(index).to(device);
            if (token_loss && index % K == 0)                // label tokens of the whole window
                num_items_in_batch = train_loader.items_in(index, std::min(index + K, L));
            const bool sync = (index + 1) % K == 0 || index + 1 == L;
            auto context = sync || sync_each_micro_batch ? nullcontext() : model.no_sync();  //@no_sync
            ModelOutput outputs;
            torch::Tensor loss;
            {
                AutocastScope autocast(device.type(), precision);                   //@autocast
                outputs = model(batch);                                             //@forward
                loss = token_loss ? outputs.loss_sum * world_size / num_items_in_batch  //@scale
                                  : outputs.loss / K;                               //@scale
            }
            scaler.scale(loss).backward();   // .grad += ∂(S·loss)/∂w, averaged on sync  //@backward,all_reduce
            ctx.micro_batch_done(outputs, batch, index, sync);
            if (ctx.config().scheduler_per_micro_batch && !sync)
                lr_scheduler.step();                         // the pitfall: K times too fast
            if (ctx.config().scaler_per_micro_batch && !sync) {
                scaler.unscale_(optimizer);                  // the pitfall: S changes inside the window,
                scaler.update();                             // and what .grad holds is divided again
            }
            if (sync) {
                scaler.unscale_(optimizer);                  // .grad /= S, once per window   //@unscale
                const double grad_norm = clip_grad_norm_(model.parameters(), max_grad_norm);
                bool stepped = false;                        // as the Trainer's optimizer_was_run
                if (ctx.end_window(grad_norm))               // else skipped, or diverged
                    stepped = scaler.step(optimizer);        // skipped on inf/NaN gradients  //@step
                scaler.update();                             // S × ½ after an overflow       //@update
                if (stepped) lr_scheduler.step();                                         //@scheduler
                optimizer.zero_grad();                                                    //@zero_grad
                ctx.optimizer_step_done(index + 1);          // log, evaluate, save
                if (ctx.max_steps_reached_mid_epoch()) return;
            }
        }
        ctx.epoch_done();
    }
    // listing:end
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
