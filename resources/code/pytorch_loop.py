#!/usr/bin/python3
"""The plain PyTorch loop of the studio's code panel, as a script that runs.

It continues an accum-run checkpoint of the MLP on Fashion-MNIST (--mode pytorch,
SGD) in eager PyTorch: the same weights and momentum, the same samples in the same
order (the engine's seeded shuffle, reproduced below), and prints one JSON line per
optimizer step, {"step": …, "loss": …}, the window's loss as accum-run logs it.

    accum-run --model mlp --max-steps 30 --save-strategy steps --save-steps 10 --output-dir run
    /usr/bin/python3 pytorch_loop.py --checkpoint run/checkpoint-10 --steps 20

The model is wrapped in DistributedDataParallel, as PyTorch's documentation
does for several processes: started with RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT (by torchrun, or by hand), each process takes its shard of every
epoch (DistributedSampler's), and a checkpoint of accum-run --nproc-per-node N
continues with the same number of processes:

    accum-run --model mlp --batch-size 32 --nproc-per-node 2 --max-steps 30 \
        --save-strategy steps --save-steps 10 --output-dir run2
    for r in 0 1; do RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
        /usr/bin/python3 pytorch_loop.py --checkpoint run2/checkpoint-10 --steps 20 & done; wait

A run with --mixed-precision bf16 continues under CPU autocast in bf16; one with
--loss-scaling dynamic with torch.amp.GradScaler("cpu") from the checkpoint's
scaler state (PyTorch 2.3 or later: earlier GradScalers are CUDA only).

The region between the listing marks is what the code panel shows; a trailing
"#@role" names the role a line plays for the panel's highlighting.
"""
import argparse
import contextlib
import gzip
import json
import math
import os
import sys
from types import SimpleNamespace

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

MASK64 = (1 << 64) - 1


def seed_seq(seeds, words):
    """std::seed_seq::generate: `words` 32-bit values from the 32-bit `seeds`."""
    n, s = words, len(seeds)
    out = [0x8B8B8B8B] * n
    t = 11 if n >= 623 else 7 if n >= 68 else 5 if n >= 39 else 3 if n >= 7 else (n - 1) // 2
    p, q = (n - t) // 2, (n - t) // 2 + t
    m = max(s + 1, n)
    mix = lambda x: ((x & 0xFFFFFFFF) ^ ((x & 0xFFFFFFFF) >> 27))
    for k in range(m):
        r1 = (1664525 * mix(out[k % n] ^ out[(k + p) % n] ^ out[(k - 1) % n])) & 0xFFFFFFFF
        r2 = (r1 + (s if k == 0 else (k % n) + seeds[k - 1] if k <= s else k % n)) & 0xFFFFFFFF
        out[(k + p) % n] = (out[(k + p) % n] + r1) & 0xFFFFFFFF
        out[(k + q) % n] = (out[(k + q) % n] + r2) & 0xFFFFFFFF
        out[k % n] = r2
    for k in range(m, m + n):
        r3 = (1566083941 * mix(out[k % n] + out[(k + p) % n] + out[(k - 1) % n])) & 0xFFFFFFFF
        r4 = (r3 - (k % n)) & 0xFFFFFFFF
        out[(k + p) % n] ^= r3
        out[(k + q) % n] ^= r4
        out[k % n] = r4
    return out


class Mt19937_64:
    """std::mt19937_64 seeded from a std::seed_seq."""

    def __init__(self, seeds):
        w = seed_seq(seeds, 624)
        self.mt = [(w[2 * i] | (w[2 * i + 1] << 32)) for i in range(312)]
        if all(x == 0 for x in [self.mt[0] >> 31] + self.mt[1:]):
            self.mt[0] = 1 << 63
        self.index = 312

    def __call__(self):
        if self.index >= 312:
            mt = self.mt
            for i in range(312):
                x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % 312] & 0x7FFFFFFF)
                mt[i] = mt[(i + 156) % 312] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
            self.index = 0
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK64


def epoch_order(size, seed, epoch, shuffle):
    """The engine's data order (engine/src/data/data_loader.cpp): it depends on the
    seed and the epoch only, never on the batch size."""
    order = list(range(size))
    if shuffle:
        rng = Mt19937_64([seed & 0xFFFFFFFF, seed >> 32, epoch & 0xFFFFFFFF, 0x5A17])
        for i in range(size - 1, 0, -1):
            j = rng() % (i + 1)
            order[i], order[j] = order[j], order[i]
    return order


class TrainLoader:
    """Batches of `batch_size` in the engine's order; the last one may be smaller.
    With several processes, this one's shard of it, as DistributedSampler(drop_last=False)
    shares an epoch out: padded by repeating it from the start, positions rank, rank + N, …"""

    def __init__(self, x, y, batch_size, seed, shuffle, rank=0, world_size=1):
        self.x, self.y, self.batch_size, self.seed, self.shuffle = x, y, batch_size, seed, shuffle
        self.rank, self.world_size = rank, world_size
        self.set_epoch(0)

    def set_epoch(self, epoch):
        order = epoch_order(len(self.y), self.seed, epoch, self.shuffle)
        if self.world_size > 1:
            length = (len(order) + self.world_size - 1) // self.world_size
            order = [order[p % len(order)] for p in range(self.rank, length * self.world_size, self.world_size)]
        self.order = torch.tensor(order)

    def __len__(self):
        return (len(self.order) + self.batch_size - 1) // self.batch_size

    def __iter__(self):
        for b in range(len(self)):
            idx = self.order[b * self.batch_size:(b + 1) * self.batch_size]
            yield self.x.index_select(0, idx), self.y.index_select(0, idx)


def load_fashion_mnist(directory):
    with gzip.open(os.path.join(directory, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(directory, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(images.copy()).float() / 255.0 - 0.2860) / 0.3530
    return x, torch.from_numpy(labels.astype(np.int64))


class Mlp(nn.Module):
    """784-256-128-10; outputs = model(inputs, labels=targets) gives .loss and .logits."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, inputs, labels):
        logits = self.body(inputs.flatten(1))
        return SimpleNamespace(loss=F.cross_entropy(logits, labels), logits=logits)


class Cnn(nn.Module):
    """The engine's cnn: two blocks of conv 3 × 3 (padded 1), ReLU, max-pool 2, then 3136-128-10."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, inputs, labels):
        logits = self.head(self.features(inputs).flatten(1))
        return SimpleNamespace(loss=F.cross_entropy(logits, labels), logits=logits)


def schedule(kind, warmup, total):
    """Transformers' get_*_schedule_with_warmup factors, as the engine's scheduler."""
    def factor(s):
        if s < warmup:
            return s / max(1, warmup)
        if kind == "constant":
            return 1.0
        progress = (s - warmup) / max(1, total - warmup)
        return max(0.0, 1.0 - progress) if kind == "linear" else max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    return factor


def checkpoint_state(checkpoint):
    """trainer_state.json with the engine's own keys (accum_state.json: progress,
    scheduler, scaler, world_size), which older engines kept in it."""
    with open(os.path.join(checkpoint, "trainer_state.json")) as f:
        state = json.load(f)
    own = os.path.join(checkpoint, "accum_state.json")
    if os.path.exists(own):
        with open(own) as f:
            state.update(json.load(f))
    return state


def run_record(checkpoint):
    """The options of the run a checkpoint-N belongs to: the run's accum_config.json,
    or an older run's config.json (where the model's config now goes)."""
    run_dir = os.path.dirname(os.path.abspath(checkpoint))
    path = os.path.join(run_dir, "accum_config.json")
    if not os.path.exists(path):
        path = os.path.join(run_dir, "config.json")
    with open(path) as f:
        return json.load(f)


SAFETENSORS_DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
                      "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
                      "U8": torch.uint8, "BOOL": torch.bool}


def checkpoint_weights(checkpoint):
    """The engine's weights by parameter name: model.safetensors (read here as its layout
    says, no package needed), or model.pt (LibTorch's archive) in an earlier engine's checkpoint."""
    old = os.path.join(checkpoint, "model.pt")
    if os.path.exists(old):
        return dict(torch.jit.load(old).named_parameters())
    with open(os.path.join(checkpoint, "model.safetensors"), "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        data = f.read()
    weights = {}
    for name, entry in header.items():
        if name != "__metadata__":
            begin, end = entry["data_offsets"]
            dtype, raw = SAFETENSORS_DTYPES[entry["dtype"]], bytearray(data[begin:end])
            flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
            weights[name] = flat.reshape(entry["shape"])
    return weights


def restore(checkpoint, model, optimizer):
    """Weights and the optimizer's state from the engine's checkpoint: model.safetensors and
    optimizer.pt (torch.optim's state_dict(), its groups as this optimizer's), or an earlier
    engine's model.pt and LibTorch archive. SGD's momentum buffers, or AdamW's step count and moments."""
    saved = checkpoint_weights(checkpoint)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(saved[name])
    if not os.path.exists(os.path.join(checkpoint, "model.pt")):
        state = torch.load(os.path.join(checkpoint, "optimizer.pt"))
        groups = [g["params"] for g in state["param_groups"]]
        mine = [g["params"] for g in optimizer.param_groups]
        if len(groups) != len(mine):  # the same parameters, numbered group after group
            groups, mine = [[i for g in groups for i in g]], [[p for g in mine for p in g]]
        for indices, params in zip(groups, mine):
            for i, p in zip(indices, params):
                if i in state["state"]:
                    optimizer.state[p] = {k: v.clone() for k, v in state["state"][i].items()}
        return
    # accum_optimizer.pt: LibTorch's archive (optimizer.pt in checkpoints of older engines).
    own = os.path.join(checkpoint, "accum_optimizer.pt")
    archive = torch.jit.load(own if os.path.exists(own) else os.path.join(checkpoint, "optimizer.pt"))
    group = archive.param_groups._modules["param_groups/0"]._c
    params = list(model.parameters())
    for i, p in enumerate(params):
        key = group.getattr("params/%d" % i)
        state = dict(archive.state.named_children()).get(key)
        if state is not None and state._c.hasattr("momentum_buffer"):
            optimizer.state[p]["momentum_buffer"] = state._c.getattr("momentum_buffer").clone()
        if state is not None and state._c.hasattr("exp_avg"):
            optimizer.state[p]["step"] = torch.tensor(float(state._c.getattr("step")))
            optimizer.state[p]["exp_avg"] = state._c.getattr("exp_avg").clone()
            optimizer.state[p]["exp_avg_sq"] = state._c.getattr("exp_avg_sq").clone()


def init_process_group():
    """torchrun's processes meet through its environment; a plain run is a group of one."""
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("gloo")
    else:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)


def log_step(step, window_loss):
    """window_loss: the mean of this process's micro-batch losses in the window
    (a partial window at an epoch's end too: not the sum of its losses / K)."""
    # The window's loss over every process's micro-batches (their mean), printed by rank 0.
    loss = torch.tensor([window_loss], dtype=torch.float64)
    dist.all_reduce(loss)
    if dist.get_rank() == 0:
        print(json.dumps({"step": step, "loss": loss.item() / dist.get_world_size()}), flush=True)


def make_scaler(config, state):
    """GradScaler as the engine's: on with --loss-scaling dynamic (or fp16), where
    the checkpoint left it; off, it passes every call through."""
    enabled = config.get("loss-scaling") == "dynamic" or config.get("mixed-precision") == "fp16"
    cpu_scaler = getattr(torch.amp, "GradScaler", None)
    if not enabled:
        return cpu_scaler("cpu", enabled=False) if cpu_scaler else torch.cuda.amp.GradScaler(enabled=False)
    if cpu_scaler is None:
        sys.exit("pytorch_loop.py: --loss-scaling dynamic on the CPU needs PyTorch 2.3 or later (torch.amp.GradScaler)")
    scaler = cpu_scaler("cpu", init_scale=config["loss-scale-init"])
    if "scaler" in state:
        scaler.load_state_dict(state["scaler"])
    return scaler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="an accum-run checkpoint-N directory")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist", help="Fashion-MNIST directory")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps to run")
    args = parser.parse_args()
    config = run_record(args.checkpoint)
    state = checkpoint_state(args.checkpoint)
    if config["mode"] != "pytorch" or config["model"] != "mlp" or config["dataset"] != "fashion-mnist" \
            or config["optimizer"] != "sgd" or config.get("mixed-precision", "no") == "fp16":
        sys.exit("pytorch_loop.py: continues --mode pytorch runs of the mlp on fashion-mnist with sgd, "
                 "in fp32 or bf16")
    torch.set_num_threads(1)
    init_process_group()
    processes = config.get("nproc-per-node", 1) * config.get("nnodes", 1)
    if processes != dist.get_world_size():
        sys.exit("pytorch_loop.py: the checkpoint is of %d processes; run it with as many (torchrun "
                 "--nproc-per-node)" % processes)
    x, y = load_fashion_mnist(args.data)
    train_loader = TrainLoader(x, y, config["batch-size"], config["seed"], config["shuffle"],
                               dist.get_rank(), dist.get_world_size())
    model = Mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"],
                                weight_decay=config["weight-decay"])
    restore(args.checkpoint, model, optimizer)
    global_step = state["global_step"]
    for group in optimizer.param_groups:
        group["initial_lr"] = config["lr"]
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, schedule(config["scheduler"], config["warmup-steps"], state["max_steps"]),
        last_epoch=state["scheduler"]["step_count"] - 1)
    for group in optimizer.param_groups:  # LambdaLR resumed: the rate of the step to come
        group["lr"] = config["lr"] * lr_scheduler.lr_lambdas[0](state["scheduler"]["step_count"])
    gradient_accumulation_steps = config["accumulation-steps"]
    max_grad_norm = config["max-grad-norm"]
    use_amp = config.get("mixed-precision", "no") == "bf16"
    scaler = make_scaler(config, state)
    start_epoch, start_index = state["progress"]["epoch"], state["progress"]["next_index"]
    last_step = global_step + args.steps
    updates_per_epoch = -(-len(train_loader) // gradient_accumulation_steps)
    num_epochs = start_epoch + 1 + args.steps // updates_per_epoch  # enough for --steps more updates
    micro_losses = []  # the window's micro-batch losses: accum-run logs their mean

    # listing:begin
    model = DistributedDataParallel(model)           # averages .grad across the processes
    K = gradient_accumulation_steps
    for epoch in range(start_epoch, num_epochs):
        model.train()
        train_loader.set_epoch(epoch)                # this epoch's shuffle
        for index, (inputs, targets) in enumerate(train_loader):
            if epoch == start_epoch and index < start_index:
                continue                             # resuming mid-epoch
            sync = (index + 1) % K == 0 or index + 1 == len(train_loader)
            with model.no_sync() if not sync else contextlib.nullcontext():  #@no_sync
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_amp):  #@autocast
                    outputs = model(inputs, labels=targets)          #@forward
                    loss = outputs.loss / K                          #@scale
                scaler.scale(loss).backward()    # all-reduce on sync  #@backward,all_reduce
            micro_losses.append(outputs.loss.item())
            if sync:
                scaler.unscale_(optimizer)           # .grad /= S, once per window  #@unscale
                if max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                scale = scaler.get_scale()
                scaler.step(optimizer)               # skipped on inf/NaN gradients  #@step
                scaler.update()                      # S × ½ after an overflow  #@update
                if scaler.get_scale() >= scale:      # not skipped: the schedule moves
                    lr_scheduler.step()                                  #@scheduler
                optimizer.zero_grad()                                #@zero_grad
                global_step += 1
                log_step(global_step, sum(micro_losses) / len(micro_losses))
                micro_losses = []
                if global_step == last_step:
                    return
    # listing:end


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
