#!/usr/bin/python3
"""Eager PyTorch reference for the benchmark: the same models, data layout and
loop as accum-run's `--mode pytorch`, written as a person would in Python.

Times only the training steps (data are loaded and shuffled before the clock
starts) and prints one JSON line: {"samples_per_second": ..., ...}. Runs with
Debian's python3-torch (LibTorch 1.13) and with torch 2.x (the environment of
scripts/setup-libtorch2.sh), where --compile adds torch.compile(model) and
--precision bf16 the forward under CPU autocast. --serve keeps one process (and
its compiled graphs) for several timed runs: bench/run_bench.py alternates them
with accum-run's.
"""
import argparse
import gzip
import json
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_fashion_mnist(directory):
    with gzip.open(f"{directory}/train-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{directory}/train-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(images.copy()).float() / 255.0 - 0.2860) / 0.3530
    return x, torch.from_numpy(labels.astype(np.int64)), None


def synthetic_pairs(n=4000, length=48, vocab=512, seed=0):
    # Same shapes and length distribution as the engine's synthetic-pairs
    # (content differs; speed does not depend on it).
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(15, length + 1, (n,), generator=g)
    ids = torch.randint(3, vocab, (n, length), generator=g)
    mask = (torch.arange(length)[None, :] < lengths[:, None]).long()
    ids = ids * mask
    labels = torch.randint(0, 2, (n,), generator=g)
    return ids, labels, mask


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x, mask=None):
        return self.body(x.flatten(1))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x, mask=None):
        return self.head(self.features(x).flatten(1))


D, HEADS, FF = 64, 4, 128


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.ff1, self.ff2 = nn.Linear(D, FF), nn.Linear(FF, D)
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)

    def forward(self, x, bias):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(D // HEADS)) + bias
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, D)
        h = self.norm1(x + self.out(context))
        return self.norm2(h + self.ff2(torch.relu(self.ff1(h))))


class Transformer(nn.Module):
    def __init__(self, vocab=512, length=48, classes=2):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, D), nn.Embedding(length, D)
        self.layers = nn.ModuleList([EncoderLayer(), EncoderLayer()])
        self.head = nn.Linear(D, classes)

    def forward(self, ids, mask):
        t = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(t))[None]
        bias = torch.zeros(ids.shape[0], 1, 1, t).masked_fill(~mask.bool().view(-1, 1, 1, t), -1e9)
        for layer in self.layers:
            x = layer(x, bias)
        m = mask.unsqueeze(-1).to(x.dtype)
        return self.head((x * m).sum(1) / m.sum(1).clamp_min(1.0))


class Loop:
    """The training loop of accum-run's --mode pytorch, resumable: run(steps) trains
    that many more optimizer steps, continuing the epoch order where it stopped, and
    returns what it timed. Only run()'s own steps are timed."""

    def __init__(self, a):
        torch.manual_seed(a.seed)
        if a.model == "transformer":
            x, y, mask = synthetic_pairs(seed=a.seed)
            model = Transformer()
        else:
            x, y, mask = load_fashion_mnist(a.data)
            model = Mlp() if a.model == "mlp" else Cnn()
        self.device = torch.device(a.device)
        self.module = model.to(self.device)
        self.x, self.y = x.to(self.device), y.to(self.device)
        self.mask = mask.to(self.device) if mask is not None else None
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=a.lr, momentum=0.9)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: 1.0)
        # What a person writes for speed in PyTorch 2.x: the model compiled (inductor), the
        # loss and the loop as they were. Its first calls compile the forward and the backward.
        self.model = torch.compile(self.module) if a.compile else self.module
        self.bf16 = a.precision == "bf16"
        self.K, self.B, self.seed = a.accumulation_steps, a.batch_size, a.seed
        self.epoch, self.index, self.order = 0, 0, None
        self.steps = 0
        self.module.train()

    def _micro_batch(self):
        n = self.x.shape[0]
        batches = (n + self.B - 1) // self.B
        if self.order is None or self.index == batches:
            if self.order is not None:
                self.epoch += 1
            self.order = torch.randperm(n, generator=torch.Generator().manual_seed(self.seed + self.epoch))
            self.index = 0
        idx = self.order[self.index * self.B:(self.index + 1) * self.B].to(self.device)
        self.index += 1
        last = self.index % self.K == 0 or self.index == batches
        m = self.mask.index_select(0, idx) if self.mask is not None else None
        return self.x.index_select(0, idx), self.y.index_select(0, idx), m, last

    def run(self, steps):
        K = self.K
        micro = samples = done = 0
        loss_value = grad_norm = float("nan")
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        while done < steps:
            inputs, targets, m, last = self._micro_batch()
            if self.bf16:  # the forward and the loss under autocast, as torch.autocast's documentation writes it
                with torch.autocast(self.device.type, dtype=torch.bfloat16):
                    loss = F.cross_entropy(self.model(inputs, m), targets) / K
            else:
                loss = F.cross_entropy(self.model(inputs, m), targets) / K
            loss.backward()
            micro += 1
            samples += inputs.shape[0]
            if last:
                # Same per-step work as the engine: the window loss and the gradient norm.
                grad_norm = torch.stack([p.grad.norm(2) for p in self.module.parameters()]).norm(2).item()
                loss_value = loss.item() * K
                self.optimizer.step()
                self.lr_scheduler.step()
                self.optimizer.zero_grad()
                done += 1
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        self.steps += done
        return {"samples_per_second": samples / elapsed, "samples": samples, "elapsed_s": elapsed,
                "optimizer_steps": done, "micro_steps": micro, "last_loss": loss_value,
                "last_grad_norm": grad_norm}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--accumulation-steps", type=int, default=4)
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu or cuda (scripts/gpu-check.sh)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: the forward and the loss under torch.autocast(dtype=torch.bfloat16)")
    p.add_argument("--compile", action="store_true", help="torch.compile(model) (PyTorch 2.x; inductor)")
    p.add_argument("--warmup-steps", type=int, default=0,
                   help="optimizer steps trained before the timed ones (their time, with --compile the "
                        "compilation, is reported apart as warmup_s)")
    p.add_argument("--serve", action="store_true",
                   help="after the warm-up print {\"ready\": ...}, then for each line N read from standard "
                        "input train N more optimizer steps and print their figures (one JSON line each)")
    a = p.parse_args()
    if a.compile and not hasattr(torch, "compile"):
        p.error(f"--compile: torch {torch.__version__} has no torch.compile (PyTorch 2.0 or later)")
    torch.set_num_threads(a.threads)
    loop = Loop(a)
    warmup = {"warmup_s": 0.0, "warmup_steps": a.warmup_steps}
    if a.warmup_steps > 0:
        warmup["warmup_s"] = loop.run(a.warmup_steps)["elapsed_s"]
    if not a.serve:
        print(json.dumps({**loop.run(a.max_steps), **warmup}))
        return
    print(json.dumps({"ready": True, "torch": torch.__version__, **warmup}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            steps = int(line)
        except ValueError:
            print(json.dumps({"error": f"expected a number of optimizer steps, not {line!r}"}), flush=True)
            continue
        print(json.dumps(loop.run(max(1, steps))), flush=True)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
