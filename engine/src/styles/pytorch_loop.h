#pragma once

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
} // namespace accum
