#pragma once
// The three styles' training loops, each on a prepared RunContext.

namespace accum {
class RunContext;

// The explicit loop, as in the Python original:
//   for index, batch in enumerate(train_loader):
//       outputs = model(inputs, labels=targets)
//       loss = outputs.loss / K
//       loss.backward()
//       if (index + 1) % K == 0:
//           optimizer.step(); lr_scheduler.step(); optimizer.zero_grad()
void run_pytorch_loop(RunContext& ctx);
// Accelerate's accumulate() loop (accelerator.cpp).
void run_accelerator_style(RunContext& ctx);
// Transformers' Trainer.train() (trainer.cpp).
void run_trainer_style(RunContext& ctx);

// The run's style (config.mode), from the checkpoint config.resume_from names
// when resuming: the loop and the Accelerator load it first, the Trainer in
// its own train(), as Transformers does.
void run_style(RunContext& ctx);
} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
