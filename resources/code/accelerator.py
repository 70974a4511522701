#!/usr/bin/env python3
"""Accelerate's loop of the studio's code panel, as a script that runs.

It continues an accum-run checkpoint of --mode accelerator (the MLP or the CNN
on Fashion-MNIST, SGD or AdamW, in fp32, one process) with Hugging Face
Accelerate: Accelerator(gradient_accumulation_steps=K), prepare(...),
accelerator.accumulate(model), accelerator.backward(loss), and
optimizer.step(), lr_scheduler.step(), optimizer.zero_grad() written on every
micro-batch. The weights and the optimizer's state are the checkpoint's, the
samples come in the engine's order (its seeded shuffle, as a Sampler), and it
prints one JSON line per optimizer step, {"step": …, "loss": …}, the window's
loss as accum-run logs it (the mean of its micro-batch losses):

    accum-run --mode accelerator --model mlp --max-steps 30 --save-strategy steps --save-steps 10 --output-dir run
    python accelerator.py --checkpoint run/checkpoint-10 --steps 20

It needs torch 2.x and accelerate (scripts/setup-libtorch2.sh makes such an
environment); the peers suite (tests/peers) runs it against accum-run.

The region between the listing marks is what the code panel shows; a trailing
"#@role" names the role a line plays for the panel's highlighting.
"""
import argparse
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_loop import (Cnn, Mlp, checkpoint_state, epoch_order, load_fashion_mnist, restore,  # noqa: E402
                          run_record, schedule)


class EngineOrder(torch.utils.data.Sampler):
    """The engine's order of each epoch (from the seed and the epoch alone); the
    prepared loader calls set_epoch, as for a DistributedSampler."""

    def __init__(self, size, seed, shuffle):
        self.size, self.seed, self.shuffle, self.epoch = size, seed, shuffle, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        return iter(epoch_order(self.size, self.seed, self.epoch, self.shuffle))

    def __len__(self):
        return self.size


def load_run(checkpoint, mode):
    """The run's options (its accum_config.json) and the checkpoint's
    trainer_state.json, refused unless this script can continue it."""
    config = run_record(checkpoint)
    state = checkpoint_state(checkpoint)
    if config["mode"] != mode or config["model"] not in ("mlp", "cnn") or config["dataset"] != "fashion-mnist" \
            or config.get("mixed-precision", "no") != "no" or state.get("world_size", 1) != 1 \
            or config.get("batch-norm") or config.get("dropout", 0) > 0:
        sys.exit("%s: continues --mode %s runs of the mlp or the cnn on fashion-mnist, in fp32, in one process"
                 % (os.path.basename(sys.argv[0]), mode))
    return config, state


def make_optimizer(config, model):
    if config["optimizer"] == "adamw":
        return torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=config["weight-decay"])
    return torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"],
                           weight_decay=config["weight-decay"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="an accum-run checkpoint-N directory")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist", help="Fashion-MNIST directory")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps to run")
    args = parser.parse_args()
    config, state = load_run(args.checkpoint, "accelerator")
    from accelerate import Accelerator

    torch.set_num_threads(1)
    x, y = load_fashion_mnist(args.data)
    train_dataloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                                   batch_size=config["batch-size"],
                                                   sampler=EngineOrder(len(y), config["seed"], config["shuffle"]))
    model = Cnn() if config["model"] == "cnn" else Mlp()
    optimizer = make_optimizer(config, model)
    restore(args.checkpoint, model, optimizer)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, schedule(config["scheduler"], config["warmup-steps"], state["max_steps"]))
    with warnings.catch_warnings():  # the schedule moved to the checkpoint's step
        warnings.simplefilter("ignore")
        for _ in range(state["scheduler"]["step_count"]):
            lr_scheduler.step()
    global_step, last_step = state["global_step"], state["global_step"] + args.steps
    start_epoch, start_index = state["progress"]["epoch"], state["progress"]["next_index"]
    num_epochs = start_epoch + 2 + args.steps * config["accumulation-steps"] // max(1, len(train_dataloader))
    max_grad_norm = config["max-grad-norm"]
    micro_losses = []

    # listing:begin
    accelerator = Accelerator(gradient_accumulation_steps=config["accumulation-steps"], cpu=True)
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler)    # DDP with several processes
    for epoch in range(start_epoch, num_epochs):
        model.train()
        train_dataloader.set_epoch(epoch)                     # this epoch's shuffle
        batches = train_dataloader
        if epoch == start_epoch and start_index > 0:          # resuming mid-epoch
            batches = accelerator.skip_first_batches(train_dataloader, start_index)
        for inputs, targets in batches:
            with accelerator.accumulate(model):               # model.no_sync() unless syncing  #@no_sync
                outputs = model(inputs, labels=targets)       # prepared: under autocast  #@autocast,forward
                loss = outputs.loss
                accelerator.backward(loss)                    # scaler.scale(loss / K).backward()  #@scale,backward,all_reduce
                if accelerator.sync_gradients and max_grad_norm > 0:
                    accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)   # unscale_ first  #@unscale
                optimizer.step()             # nothing until sync; then scaler.step, scaler.update  #@step,update
                lr_scheduler.step()          # nothing until sync, nor after a skipped step  #@scheduler
                optimizer.zero_grad()        # does nothing until sync  #@zero_grad
            micro_losses.append(loss.item())
            if accelerator.sync_gradients:
                global_step += 1
                print(json.dumps({"step": global_step, "loss": sum(micro_losses) / len(micro_losses)}), flush=True)
                micro_losses = []
                if global_step == last_step:
                    return
    # listing:end


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
