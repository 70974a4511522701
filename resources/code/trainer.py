#!/usr/bin/env python3
"""The Trainer of the studio's code panel, as a script that runs.

It continues an accum-run checkpoint of --mode trainer (the MLP or the CNN on
Fashion-MNIST, SGD or AdamW, in fp32, one process) with Hugging Face
Transformers' real Trainer: TrainingArguments(gradient_accumulation_steps=K,
...) from the run's accum_config.json, and trainer.train(resume_from_checkpoint=...)
from a Trainer checkpoint made of the accum-run one (its weights, the
optimizer's state in the Trainer's own parameter groups, the schedule at its
step, trainer_state.json at its global step). The samples come in the engine's
order (its seeded shuffle, as the Trainer's sampler), and it prints one JSON
line per optimizer step, {"step": …, "loss": …}, the loss the Trainer logs
(logging_steps=1: the window's loss):

    accum-run --mode trainer --model mlp --max-steps 30 --save-strategy steps --save-steps 10 --output-dir run
    python trainer.py --checkpoint run/checkpoint-10 --steps 20 --output-dir hf-run

It needs torch 2.x and transformers (scripts/setup-libtorch2.sh makes such an
environment); the peers suite (tests/peers) runs it against accum-run.

The region between the listing marks is what the code panel shows: the lines
that build and run the Trainer, then, as comments, what train() does inside
(Transformers' _inner_training_loop), which the panel lights line by line; a
trailing "#@role" names the role a line plays for the panel's highlighting.
"""
import argparse
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accelerator import EngineOrder, load_run  # noqa: E402
from pytorch_loop import Cnn, Mlp, load_fashion_mnist, restore  # noqa: E402


class Samples(torch.utils.data.Dataset):
    """Fashion-MNIST rows as the Trainer's collator wants them: {"inputs", "labels"}."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"inputs": self.x[i], "labels": self.y[i]}


class Model(torch.nn.Module):
    """The engine's model; returns {"loss", "logits"}, which the Trainer reads."""

    def __init__(self, kind):
        super().__init__()
        self.net = Cnn() if kind == "cnn" else Mlp()

    def forward(self, inputs, labels):
        outputs = self.net(inputs, labels=labels)
        return {"loss": outputs.loss, "logits": outputs.logits}


def schedule_name(config):
    """The engine's --scheduler as lr_scheduler_type: constant with a warmup is
    constant_with_warmup (the Trainer's constant has none)."""
    if config["scheduler"] != "constant":
        return config["scheduler"]
    return "constant_with_warmup" if config["warmup-steps"] else "constant"


def trainer_checkpoint(trainer, engine_checkpoint, state, output_dir):
    """A Trainer checkpoint of the accum-run one, in output_dir/checkpoint-N."""
    from safetensors.torch import save_file
    from transformers import TrainerState
    folder = os.path.join(output_dir, "checkpoint-%d" % state["global_step"])
    os.makedirs(folder, exist_ok=True)
    trainer.create_optimizer()                       # the Trainer's parameter groups
    restore(engine_checkpoint, trainer.model.net, trainer.optimizer)
    trainer.create_scheduler(num_training_steps=state["max_steps"], optimizer=trainer.optimizer)
    with warnings.catch_warnings():                  # the schedule moved to the checkpoint's step
        warnings.simplefilter("ignore")
        for _ in range(state["scheduler"]["step_count"]):
            trainer.lr_scheduler.step()
    save_file({k: v.contiguous() for k, v in trainer.model.state_dict().items()},
              os.path.join(folder, "model.safetensors"))
    torch.save(trainer.optimizer.state_dict(), os.path.join(folder, "optimizer.pt"))
    torch.save(trainer.lr_scheduler.state_dict(), os.path.join(folder, "scheduler.pt"))
    TrainerState(global_step=state["global_step"], epoch=state["epoch"], max_steps=state["max_steps"],
                 logging_steps=1, train_batch_size=state["train_batch_size"],
                 num_train_epochs=state["num_train_epochs"]).save_to_json(os.path.join(folder, "trainer_state.json"))
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="an accum-run checkpoint-N directory")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist", help="Fashion-MNIST directory")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps to run")
    parser.add_argument("--output-dir", required=True, help="the Trainer's output_dir (a new directory)")
    cli = parser.parse_args()
    config, state = load_run(cli.checkpoint, "trainer")
    from transformers import Trainer, TrainerCallback, TrainingArguments

    torch.set_num_threads(1)
    x, y = load_fashion_mnist(cli.data)
    train = Samples(x, y)
    model = Model(config["model"])
    last_step = state["global_step"] + cli.steps

    class EngineOrderTrainer(Trainer):
        def _get_train_sampler(self, train_dataset=None):
            return EngineOrder(len(self.train_dataset), config["seed"], config["shuffle"])

    class PrintLoss(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if "loss" in logs:
                print(json.dumps({"step": state.global_step, "loss": logs["loss"]}), flush=True)

        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step >= last_step:
                control.should_training_stop = True

    optimizer = {"adamw": (torch.optim.AdamW, {"lr": config["lr"]}),
                 "sgd": (torch.optim.SGD, {"lr": config["lr"], "momentum": config["momentum"]})}[config["optimizer"]]

    # listing:begin
    args = TrainingArguments(output_dir=cli.output_dir, per_device_train_batch_size=config["batch-size"],
                             gradient_accumulation_steps=config["accumulation-steps"],   # K
                             learning_rate=config["lr"], max_steps=state["max_steps"],
                             lr_scheduler_type=schedule_name(config), warmup_steps=config["warmup-steps"],
                             weight_decay=config["weight-decay"], max_grad_norm=config["max-grad-norm"],
                             logging_steps=1, save_strategy="no", seed=config["seed"], use_cpu=True,
                             report_to="none", disable_tqdm=True, remove_unused_columns=False)
    trainer = EngineOrderTrainer(model=model, args=args, train_dataset=train,
                                 optimizer_cls_and_kwargs=optimizer, callbacks=[PrintLoss()])
    checkpoint = trainer_checkpoint(trainer, cli.checkpoint, state, cli.output_dir)   # of accum-run's
    trainer.train(resume_from_checkpoint=checkpoint)
    # … inside train() (Transformers' _inner_training_loop):
    # for epoch in range(num_train_epochs):
    #     for update_step in range(total_updates):    # ceil(L / K)
    #         batch_samples, num_items = get_batch_samples(epoch_iterator, num_batches)
    #         for i, inputs in enumerate(batch_samples):
    #             context = (functools.partial(accelerator.no_sync, model=model)   #@no_sync
    #                        if i != len(batch_samples) - 1 else contextlib.nullcontext)
    #             with context():
    #                 with autocast(dtype=torch.bfloat16):     # bf16=True  #@autocast
    #                     outputs = model(**inputs)  #@forward
    #                 loss = outputs["loss"] / len(batch_samples)   # the window's real size  #@scale
    #                 accelerator.backward(loss)     # scaler.scale(loss).backward() with fp16  #@backward,all_reduce
    #         accelerator.clip_grad_norm_(model.parameters(), args.max_grad_norm)   # unscale_ first  #@unscale
    #         optimizer.step()               # scaler.step(optimizer); scaler.update()  #@step,update
    #         if not accelerator.optimizer_step_was_skipped:
    #             lr_scheduler.step()  #@scheduler
    #         model.zero_grad()  #@zero_grad
    #         global_step += 1
    # listing:end


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
