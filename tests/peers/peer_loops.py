"""The three styles written with the real libraries (torch 2.11, Accelerate,
Transformers), each on the engine's initial weights and data order. Each
returns what the engine's metrics.jsonl holds for the comparison: per optimizer
step the window's loss (the mean of its micro-batch means, or its token-summed
loss over its label tokens, as accum-run records it in every style), the
learning rate the step used, the gradient norm before clipping and the
fractional epoch; per evaluation eval_loss, eval_accuracy and eval_f1."""
import contextlib
import json
import math
import os

import torch
import torch.nn as nn

import peers
from peers import pytorch_loop


ALLREDUCES = [0]  # gradient all-reduces (DDP bucket calls) in this process so far


def count_allreduces(ddp_model):
    """Counts DistributedDataParallel's gradient all-reduces: a communication hook
    that does what the default does (allreduce_hook: sum / world size) and counts.
    A micro-batch under no_sync() calls none."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    def hook(state, bucket):
        ALLREDUCES[0] += 1
        return allreduce_hook(state, bucket)

    ddp_model.register_comm_hook(None, hook)


def make_optimizer(cfg, params):
    if cfg["optimizer"] == "adamw":
        return torch.optim.AdamW(params, lr=cfg["lr"], weight_decay=cfg.get("weight-decay", 0.0))
    return torch.optim.SGD(params, lr=cfg["lr"], momentum=cfg.get("momentum", 0.9),
                           weight_decay=cfg.get("weight-decay", 0.0))


def make_scheduler(cfg, optimizer, total_steps, steps_per_update=1):
    """Transformers' schedules: the engine's --scheduler constant with --warmup-steps
    is get_constant_schedule_with_warmup, linear get_linear_schedule_with_warmup.
    steps_per_update: how many times the schedule moves per optimizer step (N for
    Accelerate's prepared scheduler with N processes), which stretches it N times."""
    import transformers
    warmup = cfg.get("warmup-steps", 0) * steps_per_update
    total_steps *= steps_per_update
    if cfg["scheduler"] == "linear":
        return transformers.get_linear_schedule_with_warmup(optimizer, warmup, total_steps)
    return transformers.get_constant_schedule_with_warmup(optimizer, warmup)


def updates_per_epoch(cfg, train):
    L = math.ceil(len(train) / cfg["batch-size"])
    return L, math.ceil(L / cfg["accumulation-steps"])


def run_length(cfg, train):
    """(epochs, optimizer steps) as accum-run counts them: --max-steps S runs
    ceil(S / per_epoch) epochs, the last cut short; else --epochs E."""
    _, per_epoch = updates_per_epoch(cfg, train)
    if cfg.get("max-steps", 0) > 0:
        return math.ceil(cfg["max-steps"] / per_epoch), cfg["max-steps"]
    return cfg["epochs"], per_epoch * cfg["epochs"]


def token_loss(cfg):
    return cfg.get("loss-normalization", "mean") == "tokens"


def window_items(batches):
    return int(sum(int(b["labels"].ne(-100).sum()) for b in batches))


class Window:
    """The window's loss as accum-run records it: mean of micro-batch means, or
    summed token losses over the window's label tokens."""

    def __init__(self, tokens):
        self.tokens, self.total, self.divisor = tokens, 0.0, 0

    def add(self, outputs, batch):
        if self.tokens:
            n = int(batch["labels"].ne(-100).sum())
            self.total += outputs.loss.item() * n  # outputs.loss is this micro-batch's token mean
            self.divisor += n
        else:
            self.total += outputs.loss.item()
            self.divisor += 1

    def take(self):
        v = self.total / self.divisor
        self.last = {"loss_sum": self.total, "items": self.divisor}  # for a sum over processes
        self.total, self.divisor = 0.0, 0
        return v


def resume_state(cfg, model, optimizer, lr_scheduler, resume):
    """Continue an accum-run checkpoint: its weights, SGD's momentum buffers, the
    schedule at its step; returns (epoch, next micro-batch, optimizer steps done)."""
    if resume is None:
        return 0, 0, 0
    state = pytorch_loop.checkpoint_state(resume)
    peers.load_weights(model, resume)
    if cfg["optimizer"] != "sgd":
        raise ValueError("resuming an accum-run checkpoint here restores SGD's state only")
    pytorch_loop.restore(resume, model, optimizer)
    for _ in range(state["scheduler"]["step_count"]):
        lr_scheduler.step()
    return state["progress"]["epoch"], state["progress"]["next_index"], state["global_step"]


def plain_loop(cfg, data, init, vocab=0, resume=None):
    """The code panel's plain loop (resources/code/pytorch_loop.py) in torch 2.11:
    loss / K, backward, step on (index + 1) % K == 0, and the epoch's partial
    window flushed at its end (the engine's documented choice)."""
    model = peers.make_model(cfg["model"], init, vocab)
    optimizer = make_optimizer(cfg, model.parameters())
    L, per_epoch = updates_per_epoch(cfg, data["train"])
    epochs, total = run_length(cfg, data["train"])
    lr_scheduler = make_scheduler(cfg, optimizer, total)
    sampler = peers.EngineOrder(len(data["train"]), cfg["seed"])
    loader = torch.utils.data.DataLoader(data["train"], batch_size=cfg["batch-size"], sampler=sampler,
                                         collate_fn=peers.collate)
    K, max_norm = cfg["accumulation-steps"], cfg.get("max-grad-norm", 0.0)
    steps, evals, window = [], [], Window(token_loss(cfg))
    start_epoch, start_index, done = resume_state(cfg, model, optimizer, lr_scheduler, resume)
    for epoch in range(start_epoch, epochs):
        model.train()
        sampler.set_epoch(epoch)
        batches = list(loader)
        for index, batch in enumerate(batches):
            if epoch == start_epoch and index < start_index:
                continue                                     # resuming mid-epoch
            if token_loss(cfg) and index % K == 0:
                num_items_in_batch = window_items(batches[index:index + K])
            outputs = model(batch["inputs"], labels=batch["labels"])
            window.add(outputs, batch)
            if token_loss(cfg):
                loss = outputs.loss * int(batch["labels"].ne(-100).sum()) / num_items_in_batch
            else:
                loss = outputs.loss / K
            loss.backward()
            if (index + 1) % K == 0 or index + 1 == L:
                lr = optimizer.param_groups[0]["lr"]
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm if max_norm > 0 else math.inf)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
                steps.append({"loss": window.take(), "learning_rate": lr, "grad_norm": float(grad_norm),
                              "epoch": epoch + (index + 1) / L})
                if len(steps) + done == total:
                    break
        evals.append(dict(peers.evaluate(model, data["eval"], cfg["batch-size"]), epoch=steps[-1]["epoch"]))
    return {"steps": steps, "evals": evals}


def accelerate_loop(cfg, data, init, vocab=0, resume=None, scheduler_steps_per_update=1):
    """Accelerate's own loop: Accelerator(gradient_accumulation_steps=K), prepare,
    accumulate(model), accelerator.backward(loss), and optimizer.step(),
    lr_scheduler.step(), optimizer.zero_grad() on every micro-batch."""
    from accelerate import Accelerator
    accelerator = Accelerator(gradient_accumulation_steps=cfg["accumulation-steps"], cpu=True)
    model = peers.make_model(cfg["model"], init, vocab)
    optimizer = make_optimizer(cfg, model.parameters())
    # With N processes each takes every N-th batch of the order (BatchSamplerShard):
    # L micro-batches per process and epoch, as accum-run's DistributedSampler shards.
    world = accelerator.num_processes
    L = math.ceil(math.ceil(len(data["train"]) / cfg["batch-size"]) / world)
    per_epoch = math.ceil(L / cfg["accumulation-steps"])
    if cfg.get("max-steps", 0) > 0:
        epochs, total = math.ceil(cfg["max-steps"] / per_epoch), cfg["max-steps"]
    else:
        epochs, total = cfg["epochs"], per_epoch * cfg["epochs"]
    # Accelerate's prepared scheduler steps N times per optimizer step (split_batches
    # False, its documented behaviour): a schedule of N × the steps and the warmup
    # moves as accum-run's per step.
    lr_scheduler = make_scheduler(cfg, optimizer, total, scheduler_steps_per_update)
    sampler = peers.EngineOrder(len(data["train"]), cfg["seed"])
    loader = torch.utils.data.DataLoader(data["train"], batch_size=cfg["batch-size"], sampler=sampler,
                                         collate_fn=peers.collate)
    start_epoch, start_index, done = resume_state(cfg, model, optimizer, lr_scheduler, resume)
    model, optimizer, loader, lr_scheduler = accelerator.prepare(model, optimizer, loader, lr_scheduler)
    if len(loader) != L:
        raise AssertionError("the prepared loader has %d batches per process, expected %d" % (len(loader), L))
    if world > 1:
        count_allreduces(model)
    seen = [0]

    def allreduces():
        n, seen[0] = ALLREDUCES[0] - seen[0], ALLREDUCES[0]
        return n
    K, max_norm = cfg["accumulation-steps"], cfg.get("max-grad-norm", 0.0)
    clip_to = max_norm if max_norm > 0 else math.inf
    steps, evals, window = [], [], Window(token_loss(cfg))
    for epoch in range(start_epoch, epochs):
        model.train()
        loader.set_epoch(epoch)
        epoch_loader, first = loader, 0
        if epoch == start_epoch and start_index:
            # Resuming mid-epoch: Accelerate's skip_first_batches (it keeps the
            # loader's epoch: its iteration count carries over).
            epoch_loader, first = accelerator.skip_first_batches(loader, start_index), start_index
        if not token_loss(cfg):
            for index, batch in enumerate(epoch_loader, start=first):
                with accelerator.accumulate(model):
                    outputs = model(batch["inputs"], labels=batch["labels"])
                    window.add(outputs, batch)
                    accelerator.backward(outputs.loss)
                    if accelerator.sync_gradients:
                        lr = optimizer.param_groups[0]["lr"]
                        grad_norm = accelerator.clip_grad_norm_(model.parameters(), clip_to)
                    optimizer.step()
                    lr_scheduler.step()
                    optimizer.zero_grad()
                if accelerator.sync_gradients:
                    steps.append({"loss": window.take(), "learning_rate": lr, "grad_norm": float(grad_norm),
                                  "epoch": epoch + (index + 1) / L, "allreduces": allreduces()})
                    if len(steps) + done == total:
                        break
        else:
            # Accelerate's documented recipe for a token-normalised loss (its
            # gradient accumulation guide): read the window ahead, count its label
            # tokens over every process, no_sync but on the last, loss * K * N / items
            # (backward divides by K, the all-reduce averages over N).
            iterator = iter(loader)
            index = 0
            for update_step in range(per_epoch):
                batch_samples = [next(iterator) for _ in range(min(K, L - update_step * K))]
                num_items_in_batch = accelerator.gather(torch.tensor(window_items(batch_samples))).sum().item()
                for i, batch in enumerate(batch_samples):
                    last = i == len(batch_samples) - 1
                    ctx = model.no_sync if not last and accelerator.num_processes > 1 else contextlib.nullcontext
                    with ctx():
                        outputs = model(batch["inputs"], labels=batch["labels"])
                        window.add(outputs, batch)
                        n = int(batch["labels"].ne(-100).sum())
                        loss = outputs.loss * n * K * accelerator.num_processes / num_items_in_batch
                        accelerator.backward(loss)
                    index += 1
                lr = optimizer.param_groups[0]["lr"]
                grad_norm = accelerator.clip_grad_norm_(model.parameters(), clip_to)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
                steps.append({"loss": window.take(), "learning_rate": lr, "grad_norm": float(grad_norm),
                              "epoch": epoch + index / L, "allreduces": allreduces(), **window.last})
                if len(steps) == total:
                    break
        evals.append(dict(peers.evaluate(accelerator.unwrap_model(model), data["eval"], cfg["batch-size"]),
                          epoch=steps[-1]["epoch"]))
    return {"steps": steps, "evals": evals}


def trainer_run(cfg, data, init, out_dir, vocab=0, accepts_loss_kwargs=None, resume=None, report_to="none"):
    """The real Trainer with TrainingArguments(gradient_accumulation_steps=K, ...),
    compute_metrics (accuracy, F1), evaluation each epoch, checkpoints and logging
    steps; the sampler gives the engine's order. Per step it records the window's
    loss (the sum of training_step's returns, which the Trainer's logged loss
    averages), the learning rate in the optimizer at on_pre_optimizer_step and the
    grad_norm _get_grad_norm returned."""
    from transformers import Trainer, TrainerCallback, TrainingArguments

    class Probe(TrainerCallback):
        def __init__(self):
            self.steps, self.logs, self.lr = [], [], None

        def on_train_begin(self, args, state, control, **kwargs):
            if isinstance(trainer.model_wrapped, torch.nn.parallel.DistributedDataParallel):
                count_allreduces(trainer.model_wrapped)
            self.seen = ALLREDUCES[0]

        def on_pre_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
            self.lr = optimizer.param_groups[0]["lr"]

        def on_step_end(self, args, state, control, **kwargs):
            self.steps.append({"loss": trainer.window_loss, "learning_rate": self.lr,
                               "grad_norm": trainer.grad_norms[-1], "epoch": state.epoch, "step": state.global_step,
                               "allreduces": ALLREDUCES[0] - self.seen})
            self.seen = ALLREDUCES[0]
            trainer.window_loss = 0.0

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.logs.append(dict(logs, step=state.global_step))

    class PeerTrainer(Trainer):
        window_loss = 0.0
        grad_norms = []
        saw_num_items = False

        def _get_train_sampler(self, train_dataset=None):
            return peers.EngineOrder(len(self.train_dataset), cfg["seed"])

        def training_step(self, model, inputs, num_items_in_batch=None):
            if num_items_in_batch is not None:
                self.saw_num_items = True
            loss = super().training_step(model, inputs, num_items_in_batch)
            self.window_loss += loss.item()
            return loss

        def _get_grad_norm(self, model, grad_norm=None):
            grad_norm = super()._get_grad_norm(model, grad_norm)
            self.grad_norms.append(float(grad_norm))
            return grad_norm

    model = peers.make_model(cfg["model"], init, vocab)
    if accepts_loss_kwargs is not None:
        model.accepts_loss_kwargs = accepts_loss_kwargs
    warmup = cfg.get("warmup-steps", 0)
    scheduler = cfg["scheduler"] if cfg["scheduler"] == "linear" else (
        "constant_with_warmup" if warmup else "constant")
    save = cfg.get("save-strategy", "epoch")
    args = TrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=cfg["batch-size"],
        per_device_eval_batch_size=cfg["batch-size"], gradient_accumulation_steps=cfg["accumulation-steps"],
        learning_rate=cfg["lr"], num_train_epochs=cfg["epochs"], lr_scheduler_type=scheduler, warmup_steps=warmup,
        weight_decay=cfg.get("weight-decay", 0.0), max_grad_norm=cfg.get("max-grad-norm", 0.0),
        logging_strategy="steps", logging_steps=cfg.get("logging-steps", 10), eval_strategy="epoch",
        save_strategy=save, save_steps=cfg.get("save-steps", 500) if save == "steps" else 500,
        save_total_limit=cfg.get("save-total-limit") or None, seed=cfg["seed"], report_to=report_to,
        disable_tqdm=True, use_cpu=True, dataloader_num_workers=0, remove_unused_columns=False,
        max_steps=cfg.get("max-steps", -1))
    kwargs = {}  # AdamW: the Trainer's own default (adamw_torch_fused from torch 2.8), its weight-decay groups
    if cfg["optimizer"] == "sgd":
        # The kwargs are the optimizer's whole set (the Trainer adds no lr to them).
        kwargs["optimizer_cls_and_kwargs"] = (torch.optim.SGD, {"lr": cfg["lr"], "momentum": cfg.get("momentum", 0.9)})
    trainer = PeerTrainer(model=model, args=args, train_dataset=data["train"], eval_dataset=data["eval"],
                          data_collator=peers.collate, compute_metrics=compute_metrics_for(vocab), **kwargs)
    trainer.grad_norms = []
    probe = Probe()
    trainer.add_callback(probe)
    trainer.train(resume_from_checkpoint=resume)
    evals = [{k: l[k] for k in ("eval_loss", "eval_accuracy", "eval_f1", "epoch")} for l in probe.logs
             if "eval_loss" in l]
    return {"steps": probe.steps, "evals": evals, "logs": probe.logs, "trainer": trainer, "out_dir": out_dir,
            "saw_num_items": trainer.saw_num_items,
            "checkpoints": peers.checkpoint_names(out_dir), "log_history": trainer.state.log_history}


def compute_metrics_for(vocab):
    return peers.compute_metrics
# SPDX-License-Identifier: GPL-3.0-or-later
