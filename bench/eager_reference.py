#!/usr/bin/python3
"""Eager PyTorch reference for the benchmark: the same models, data layout and
loop as accum-run's `--mode pytorch`, written as a person would in Python.

Times only the training steps (data are loaded and shuffled before the clock
starts) and prints one JSON line: {"samples_per_second": ..., ...}.
Runs with Debian's python3-torch (the same LibTorch 1.13 as the engine).
"""
import argparse
import gzip
import json
import math
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
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.model == "transformer":
        x, y, mask = synthetic_pairs(seed=a.seed)
        model = Transformer()
    else:
        x, y, mask = load_fashion_mnist(a.data)
        model = Mlp() if a.model == "mlp" else Cnn()
    device = torch.device(a.device)
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    mask = mask.to(device) if mask is not None else None
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    K, B = a.accumulation_steps, a.batch_size
    n = x.shape[0]
    micro_needed = a.max_steps * K

    model.train()
    steps = micro = samples = 0
    start = time.perf_counter()
    epoch = 0
    while steps < a.max_steps:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(a.seed + epoch))
        batches = (n + B - 1) // B
        for index in range(batches):
            idx = order[index * B:(index + 1) * B].to(device)
            inputs, targets = x.index_select(0, idx), y.index_select(0, idx)
            m = mask.index_select(0, idx) if mask is not None else None
            logits = model(inputs, m)
            loss = F.cross_entropy(logits, targets) / K
            loss.backward()
            micro += 1
            samples += inputs.shape[0]
            if (index + 1) % K == 0 or index + 1 == batches:
                # Same per-step work as the engine: the window loss and the gradient norm.
                grad_norm = torch.stack([p.grad.norm(2) for p in model.parameters()]).norm(2).item()
                loss_value = loss.item() * K
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
                steps += 1
                if steps >= a.max_steps:
                    break
        epoch += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(json.dumps({"samples_per_second": samples / elapsed, "samples": samples, "elapsed_s": elapsed,
                      "optimizer_steps": steps, "micro_steps": micro, "last_loss": loss_value,
                      "last_grad_norm": grad_norm}))


if __name__ == "__main__":
    main()
