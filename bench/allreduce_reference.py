#!/usr/bin/python3
"""Eager PyTorch's side of bench/allreduce_cost.cpp: torch.distributed all-reduces
on Gloo between local processes, one thread each, of the same gradients (the
MLP 784-256-128-10 and the 2-conv CNN as the engine builds them for
Fashion-MNIST), timed the same way (a barrier, then the sync). Rank 0 prints the
median and the 10th / 90th percentiles per sync, in microseconds.

    /usr/bin/python3 bench/allreduce_reference.py [ranks=2] [syncs=300]
"""
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SHAPES = {
    "mlp": [(256, 784), (256,), (128, 256), (128,), (10, 128), (10,)],
    "cnn": [(32, 1, 3, 3), (32,), (64, 32, 3, 3), (64,), (128, 3136), (128,), (10, 128), (10,)],
}


def timed(syncs, f):
    for _ in range(20):
        f()
    out = []
    for _ in range(syncs):
        dist.barrier()
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1e6)
    out.sort()
    return out[int(0.1 * (len(out) - 1))], statistics.median(out), out[int(0.9 * (len(out) - 1))]


def worker(rank, world, port, syncs):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for name, shapes in SHAPES.items():
        grads = [torch.randn(s) for s in shapes]
        numel = sum(g.numel() for g in grads)
        flat = torch.randn(numel)

        def bucketed():  # what DDP's reducer does: flatten, all-reduce, divide, copy back
            buf = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(buf)
            buf.div_(world)
            offset = 0
            for g in grads:
                g.copy_(buf[offset:offset + g.numel()].view_as(g))
                offset += g.numel()

        rows = [("flatten + all-reduce + copy back", timed(syncs, bucketed)),
                ("one all-reduce of a flat buffer", timed(syncs, lambda: dist.all_reduce(flat))),
                ("one all-reduce per tensor", timed(syncs, lambda: [dist.all_reduce(g) for g in grads]))]
        if rank == 0:
            print(f"{name}: {len(grads)} tensors, {numel} floats ({numel * 4 / 1e6:.2f} MB), {world} ranks (eager PyTorch)")
            for label, (p10, med, p90) in rows:
                print(f"  {label:<34} median {med:7.0f} us  (p10 {p10:6.0f}, p90 {p90:6.0f})")
    dist.destroy_process_group()


if __name__ == "__main__":
    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    syncs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(ranks, port, syncs), nprocs=ranks)
# SPDX-License-Identifier: GPL-3.0-or-later
