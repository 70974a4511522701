#!/usr/bin/python3
"""bf16 autocast against fp32 on the CPU: samples/s of training windows of
64 x 4 (forward and loss under autocast, loss / 4, backward, SGD momentum 0.9
once per window) for an MLP 784-256-128-10 and a 2-conv CNN, in eager LibTorch
(build/bench/amp_bench, which also runs the engine's own models) and in eager
PyTorch (this file, --worker), side by side in one go: each round runs every
implementation at each thread setting below, and inside each process fp32 and bf16
alternate.

Usage: bench/amp_speed.py [--rounds N] [--build DIR] [--idle F]
Before each measurement it waits (up to 10 minutes) until the CPUs were at
least F idle (default 0.85) over two seconds, so that a round does not run
beside someone's build on a shared machine; the idle fraction it found is
recorded with each measurement.
Prints a Markdown table: the median samples/s over the rounds, the range, and
bf16 / fp32 as the ratio of medians and the median of the paired ratios
(each pair ran back to back in one process).

Threads, as LibTorch (intra-op, OpenMP) / OpenBLAS: 1/1, 2/1 and 1/2. fp32
matrix products run in OpenBLAS on its own threads; convolutions (both
precisions) and bf16 matrix products run in oneDNN on LibTorch's threads.
2/2 is left out: on two cores the two spinning pools made the fp32 MLP up to
30x slower.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

from cpu_quiet import wait_for_idle

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"
BATCH, STEPS = 64, 4
WINDOWS = {"mlp": 150, "cnn": 12}


THREADS = [(1, 1), (2, 1), (1, 2)]  # (LibTorch, OpenBLAS)


def worker(threads, rounds):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    sys.path.insert(0, HERE)
    from eager_reference import load_fashion_mnist

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x, y, _ = load_fashion_mnist("/usr/share/datasets/fashion-mnist")
    batches = [(x[b * BATCH:(b + 1) * BATCH], y[b * BATCH:(b + 1) * BATCH]) for b in range(32)]
    models = {
        "mlp": nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10)),
        "cnn": nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)),
    }
    for r in range(rounds):
        for name, model in models.items():
            for precision in ("no", "bf16"):
                sgd = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
                state = {"next": 0}

                def window():
                    for _ in range(STEPS):
                        xb, yb = batches[state["next"]]
                        state["next"] = (state["next"] + 1) % len(batches)
                        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
                            loss = F.cross_entropy(model(xb), yb) / STEPS
                        loss.backward()
                    sgd.step()
                    sgd.zero_grad()

                for _ in range(3):  # warm-up, as amp_bench
                    window()
                start = time.perf_counter()
                for _ in range(WINDOWS[name]):
                    window()
                sps = WINDOWS[name] * STEPS * BATCH / (time.perf_counter() - start)
                print(json.dumps({"impl": "python", "config": f"{name}/eager", "precision": precision,
                                  "round": r, "samples_per_second": round(sps, 1)}), flush=True)


def run(cmd, threads, blas, idle_threshold):
    idle = wait_for_idle(idle_threshold)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas), OMP_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    recs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for rec in recs:
        rec["threads"] = f"{threads}/{blas}"
        rec["idle_before"] = round(idle, 3)
    return recs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--idle", type=float, default=0.85)
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)  # threads
    a = p.parse_args()
    if a.worker:
        return worker(a.worker, 1)
    exe = os.path.join(a.build, "bench", "amp_bench")
    if not os.path.exists(exe):
        sys.exit(f"{exe} is missing: cmake --build {a.build} --target amp_bench")
    rows = []
    for r in range(a.rounds):
        for threads, blas in THREADS:
            for rec in (run([exe, "speed", str(threads), "1"], threads, blas, a.idle) +
                        run([PY, __file__, "--worker", str(threads)], threads, blas, a.idle)):
                rec["round"] = r
                rows.append(rec)
                print(json.dumps(rec), file=sys.stderr, flush=True)
    by = collections.defaultdict(dict)
    for rec in rows:
        by[(rec["config"], rec["threads"])].setdefault(rec["precision"], {})[rec["round"]] = rec["samples_per_second"]
    idle = [rec["idle_before"] for rec in rows]
    print(f"Rounds: {a.rounds}; micro-batch {BATCH} x {STEPS} steps, SGD momentum 0.9; samples/s, median (range). "
          f"CPU idle before the measurements: {min(idle):.2f}-{max(idle):.2f}.\n")
    print("| model / implementation | threads (LibTorch/OpenBLAS) | fp32 | bf16 | bf16 / fp32 (medians) | median of paired ratios |")
    print("|---|---|---|---|---|---|")
    for (config, threads) in sorted(by):
        d = by[(config, threads)]
        fp32, bf16 = d["no"], d["bf16"]
        paired = [bf16[r] / fp32[r] for r in fp32 if r in bf16]
        cell = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}–{max(v):,.0f})"
        print(f"| {config} | {threads} | {cell(list(fp32.values()))} | {cell(list(bf16.values()))} | "
              f"**{statistics.median(bf16.values()) / statistics.median(fp32.values()):.2f}×** | "
              f"{statistics.median(paired):.2f}× |")


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
