#include "styles/styles.h"

#include "training/run_context.h"

namespace accum {

void run_style(RunContext& ctx) {
    switch (ctx.config().mode) {
    case Mode::Pytorch:
        if (!ctx.config().resume_from.empty()) ctx.load_checkpoint(ctx.config().resume_from);
        return run_pytorch_loop(ctx);
    case Mode::Accelerator:
        if (!ctx.config().resume_from.empty()) ctx.load_checkpoint(ctx.config().resume_from);
        return run_accelerator_style(ctx);
    case Mode::Trainer:
        return run_trainer_style(ctx);
    }
}

} // namespace accum
// SPDX-License-Identifier: GPL-3.0-or-later
