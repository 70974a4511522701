#!/usr/bin/python3
"""Eager PyTorch's side of bench/run_dp_bench.py: DistributedDataParallel on Gloo
between local processes, one thread each, with the models of eager_reference.py
(the engine's MLP 784-256-128-10 and 2-conv CNN on Fashion-MNIST), written as
PyTorch's documentation writes gradient accumulation with DDP:

    with model.no_sync() if not sync else nullcontext():
        loss = F.cross_entropy(model(inputs), targets) / K
        loss.backward()

Each process trains on its DistributedSampler shard of the epoch with micro-batch
B; with --sync-each-micro-batch there is no no_sync (an all-reduce after every
backward). Only the training steps are timed (after a barrier); rank 0 prints one
JSON line, {"samples_per_second": ...} over every process's samples.

    /usr/bin/python3 bench/dp_reference.py --model cnn --nproc 2 [--sync-each-micro-batch]

or with torch 2.x (bench/run_dp_bench.py takes the environment of
scripts/setup-libtorch2.sh), where --compile compiles the DDP module and
--warmup-steps keeps the compilation out of the clock.

One rank of a run across machines (bench/two_hosts_bench.py: one per host),
as torchrun's env:// would start it; --nproc is then the world size:

    python bench/dp_reference.py --model cnn --nproc 2 --rank R --master-addr HOST --master-port P
"""
import argparse
import contextlib
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eager_reference import Cnn, Mlp, load_fashion_mnist  # noqa: E402


def worker(rank, a, port, master="127.0.0.1"):
    torch.set_num_threads(a.threads)
    world = a.nproc
    x, y, _ = load_fashion_mnist(a.data)
    torch.manual_seed(a.seed)
    module = Mlp() if a.model == "mlp" else Cnn()
    if world > 1:
        dist.init_process_group("gloo", init_method=f"tcp://{master}:{port}", rank=rank, world_size=world)
        model = DistributedDataParallel(module)
    else:
        model = module
    if a.compile:  # as PyTorch's DDP documentation writes it: the DDP module, compiled
        model = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    K, B, n = a.accumulation_steps, a.batch_size, x.shape[0]
    length = (n + world - 1) // world  # DistributedSampler(drop_last=False)
    model.train()
    steps = samples = 0
    if world > 1 and a.warmup_steps == 0:
        dist.barrier()
    start = time.perf_counter()
    warmup_s = None
    epoch = 0
    while steps < a.warmup_steps + a.max_steps:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(a.seed + epoch))
        shard = torch.cat([order, order])[rank:length * world:world]
        batches = (length + B - 1) // B
        for index in range(batches):
            idx = shard[index * B:(index + 1) * B]
            inputs, targets = x.index_select(0, idx), y.index_select(0, idx)
            sync = (index + 1) % K == 0 or index + 1 == batches
            context = model.no_sync() if world > 1 and not sync and not a.sync_each_micro_batch \
                else contextlib.nullcontext()
            with context:
                loss = F.cross_entropy(model(inputs), targets) / K
                loss.backward()
            if steps >= a.warmup_steps:
                samples += inputs.shape[0] * world
            if sync:
                # The engine's per-step work: the gradient norm and the window's loss (mean over the ranks).
                grad_norm = torch.stack([p.grad.norm(2) for p in model.parameters()]).norm(2).item()
                window = torch.tensor([loss.item() * K])
                if world > 1:
                    dist.all_reduce(window)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
                steps += 1
                if steps == a.warmup_steps:
                    # The warm-up (with --compile, the compilation) is timed apart; the clock
                    # starts once every rank has finished it.
                    if world > 1:
                        dist.barrier()
                    warmup_s, start = time.perf_counter() - start, time.perf_counter()
                if steps >= a.warmup_steps + a.max_steps:
                    break
        epoch += 1
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"samples_per_second": samples / elapsed, "samples": samples, "elapsed_s": elapsed,
                          "optimizer_steps": steps - a.warmup_steps, "processes": world, "grad_norm": grad_norm,
                          "warmup_s": warmup_s or 0.0, "torch": torch.__version__}), flush=True)
    if world > 1:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="cnn", choices=["mlp", "cnn"])
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--accumulation-steps", type=int, default=4)
    p.add_argument("--max-steps", type=int, default=40)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--sync-each-micro-batch", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile the (DDP) model (PyTorch 2.x)")
    p.add_argument("--warmup-steps", type=int, default=0,
                   help="optimizer steps before the clock starts (their time reported apart as warmup_s)")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rank", type=int, help="this process's rank of --nproc started elsewhere (with --master-addr)")
    p.add_argument("--master-addr", help="rank 0's host (with --rank)")
    p.add_argument("--master-port", type=int, default=29500)
    a = p.parse_args()
    if a.compile and not hasattr(torch, "compile"):
        p.error(f"--compile: torch {torch.__version__} has no torch.compile (PyTorch 2.0 or later)")
    if a.rank is not None:
        if not a.master_addr or not 0 <= a.rank < a.nproc:
            p.error("--rank needs --master-addr and a rank below --nproc")
        worker(a.rank, a, a.master_port, a.master_addr)
        return
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    if a.nproc == 1:
        worker(0, a, port)
    else:
        mp.spawn(worker, args=(a, port), nprocs=a.nproc, join=True)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
