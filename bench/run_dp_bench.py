#!/usr/bin/python3
"""Data-parallel benchmark: accum-run --nproc-per-node against PyTorch 2.11's
DistributedDataParallel on Gloo, eager and under torch.compile (bench/dp_reference.py,
in the environment of scripts/setup-libtorch2.sh),
side by side in one go. Same models (the MLP 784-256-128-10 and the 2-conv CNN
on Fashion-MNIST), micro-batch 64 × K 4 per process, one thread per process,
SGD with momentum. For each model, each round runs, in an order that rotates
from round to round:

  engine: 1 process · 2 independent 1-process runs side by side (no communication:
          the ceiling of 2 processes here) · 2 processes (no_sync) ·
          2 processes --sync-each-micro-batch
  eager:  1 process · 2 processes DDP (no_sync) · 2 processes DDP syncing every micro-batch
  compile: 1 process · 2 processes DDP (no_sync), the DDP module under torch.compile

Every side leaves its first WARMUP_STEPS optimizer steps out of the clock (the
engine's from its step records; the references time the rest themselves; the
compilation is in the warm-up).

and reports the median samples/s (every process's samples over the training
time), the engine's gradient sync time per update (its step records'
allreduce_seconds), the ratios the issue asks for, what the measured sync time
lets no_sync gain (no_sync_ceiling), with the machine's load average
before and after. Writes bench/DP_RESULTS.md (--output to change).

    cmake --build build --target accum-run
    bench/run_dp_bench.py [--rounds 3] [--build build] [--quick]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time

import cpu_quiet
from torch_reference import WARMUP_STEPS, rate_after_warmup, step_records, torch2_python

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = None  # the torch 2.11 environment's python, found at the start (torch2_python)
# Per process: micro-batch × K; 2 processes in the data-parallel variants.
BATCH, K, PROCESSES = 64, 4, 2
# name, model, optimizer steps per run (each run a few seconds on one core)
MODELS = [("CNN", "cnn", 40), ("MLP", "mlp", 600)]


def engine_command(build, model, steps, out):
    return [f"{build}/app/accum-run", "--model", model, "--dataset", "fashion-mnist", "--batch-size", str(BATCH),
            "--accumulation-steps", str(K), "--max-steps", str(steps + WARMUP_STEPS), "--threads", "1", "--lr", "0.05",
            "--optimizer", "sgd", "--momentum", "0.9", "--eval-strategy", "no", "--save-strategy", "no",
            "--quiet", "--output-dir", out]


def engine(build, model, steps, nproc, sync_each):
    with tempfile.TemporaryDirectory() as out:
        cmd = engine_command(build, model, steps, out)
        if nproc > 1:
            cmd += ["--nproc-per-node", str(nproc), "--master-port", "0"]
        if sync_each:
            cmd += ["--sync-each-micro-batch"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return timed(out)


def timed(out):
    """samples/s of every process together after the warm-up, and the gradient syncs per update."""
    steps_ = step_records(out)
    timed_steps = steps_[WARMUP_STEPS:]
    allreduces = sum(s["grad_allreduces"] for s in timed_steps) / max(1, len(timed_steps))
    allreduce_s = sum(s["allreduce_seconds"] for s in timed_steps) / max(1, len(timed_steps))
    return rate_after_warmup(steps_), (allreduces, allreduce_s)


def engine_side_by_side(build, model, steps):
    """Two independent one-process runs at once, their samples/s summed: what 2
    processes on this machine reach with no communication at all (the ceiling of
    the 2 processes / 1 process ratio here)."""
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        runs = [subprocess.Popen(engine_command(build, model, steps, out), stdout=subprocess.DEVNULL) for out in (a, b)]
        for r in runs:
            if r.wait() != 0:
                raise subprocess.CalledProcessError(r.returncode, r.args)
        return sum(timed(out)[0] for out in (a, b)), None


def eager(model, steps, nproc, sync_each, compile=False):
    cmd = [PY, f"{HERE}/dp_reference.py", "--model", model, "--nproc", str(nproc), "--max-steps", str(steps),
           "--threads", "1", "--warmup-steps", str(WARMUP_STEPS)]
    if sync_each:
        cmd += ["--sync-each-micro-batch"]
    if compile:
        cmd += ["--compile"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return json.loads(line)["samples_per_second"], None


VARIANTS = [
    # key, label, runner(build, model, steps)
    ("e1", "engine, 1 process", lambda b, m, s: engine(b, m, s, 1, False)),
    ("e1x2", "engine, 2 independent 1-process runs side by side (no communication)",
     lambda b, m, s: engine_side_by_side(b, m, s)),
    ("e2", "engine, 2 processes (no_sync)", lambda b, m, s: engine(b, m, s, 2, False)),
    ("e2s", "engine, 2 processes, sync every micro-batch", lambda b, m, s: engine(b, m, s, 2, True)),
    ("p1", "eager, 1 process", lambda b, m, s: eager(m, s, 1, False)),
    ("p2", "eager DDP, 2 processes (no_sync)", lambda b, m, s: eager(m, s, 2, False)),
    ("p2s", "eager DDP, 2 processes, sync every micro-batch", lambda b, m, s: eager(m, s, 2, True)),
    ("c1", "compiled, 1 process", lambda b, m, s: eager(m, s, 1, False, compile=True)),
    ("c2", "compiled DDP, 2 processes (no_sync)", lambda b, m, s: eager(m, s, 2, False, compile=True)),
]


def load():
    return os.getloadavg()[0]


def busy_cores(seconds=2.0):
    """Cores busy over `seconds` while this benchmark runs nothing: other people's work."""
    return (1.0 - cpu_quiet.cpu_idle(seconds)) * (os.cpu_count() or 1)


def wait_until_quiet(limit, max_wait):
    """Waits (up to max_wait s) until others keep less than `limit` cores busy; returns what was seen."""
    start = time.time()
    while True:
        busy = busy_cores()
        if busy < limit or time.time() - start > max_wait:
            return busy
        time.sleep(5)


def no_sync_ceiling(sps, sync_s, sync_each_s, syncs_each):
    """What no_sync can gain, from the no_sync run's own figures. An update takes
    T = 2 × 64 × 4 / samples/s, of which S syncing once (the engine's
    allreduce_seconds: the all-reduce, the copies and the wait for the other
    rank). No_sync saves only the K - 1 syncs it skips: if each costs what the one
    does, syncing every micro-batch takes T + (K - 1) × S and no_sync / sync-each
    is 1 + (K - 1) × S / T; a ratio r needs S = (r - 1) × T / (K - 1). The
    sync-each runs' own sync time per update (K syncs) gives the ratio they
    predict: (T - S + that time) / T."""
    if not sync_s or not sps:
        return []
    update_s = PROCESSES * BATCH * K / sps
    k = syncs_each or K
    text = (f"No_sync saves the syncs it skips and nothing else: the no_sync run's update takes "
            f"{update_s * 1e3:.1f} ms, of which {sync_s * 1e3:.2f} ms syncing ({sync_s / update_s:.1%}); "
            f"{k:g} such syncs per update instead of one make no_sync / sync-each "
            f"{1 + (k - 1) * sync_s / update_s:.2f} ×")
    if sync_each_s:
        text += (f" (the sync-each runs spent {sync_each_s * 1e3:.2f} ms per update syncing, which predicts "
                 f"{(update_s - sync_s + sync_each_s) / update_s:.2f} ×)")
    text += (f"; 1.5 × would need syncs of {0.5 * update_s / (k - 1) * 1e3:.1f} ms each, "
             f"{0.5 * update_s / (k - 1) / sync_s:.1f} × what one costs here.")
    return [text, ""]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true", help="a fifth of the steps")
    p.add_argument("--output", default=os.path.join(HERE, "DP_RESULTS.md"))
    p.add_argument("--quiet-below", type=float, default=0.3,
                   help="before each run, wait until other programs keep fewer cores busy (default 0.3)")
    p.add_argument("--max-wait", type=float, default=120, help="seconds to wait for that at most (default 120)")
    a = p.parse_args()
    global PY
    PY = torch2_python()
    scale = 0.2 if a.quick else 1.0
    loads = [load()]
    others = []  # cores other programs kept busy just before each run
    results = {}
    for name, model, steps in MODELS:
        steps = max(4, int(steps * scale))
        runs = {k: [] for k, _, _ in VARIANTS}
        allreduces = {}
        sync_seconds = {k: [] for k, _, _ in VARIANTS}  # gradient sync time per update, per run
        for r in range(a.rounds):
            order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
            for key, label, run in order:
                others.append(wait_until_quiet(a.quiet_below, a.max_wait))
                sps, ar = run(a.build, model, steps)
                runs[key].append(sps)
                if ar is not None:
                    allreduces[key] = ar[0]
                    sync_seconds[key].append(ar[1])
                print(f"{name} round {r + 1}: {label}: {sps:,.0f} samples/s (others busy {others[-1]:.2f} "
                      f"cores before it, load {load():.2f})", flush=True)
            loads.append(load())
        results[name] = (steps, runs, allreduces, sync_seconds)

    med = lambda xs: statistics.median(xs)  # noqa: E731
    torch_version = subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                                   text=True).stdout.strip()
    lines = [
        "# Data-parallel benchmark: accum-run --nproc-per-node vs eager PyTorch DDP",
        "",
        f"Generated by `bench/run_dp_bench.py --rounds {a.rounds}{' --quick' if a.quick else ''}` on "
        f"{datetime.date.today().isoformat()} ({platform.machine()}, {os.cpu_count()} cores); load average "
        f"(1 min) {min(loads):.2f} … {max(loads):.2f} during the runs (the machine is shared; the benchmark's "
        f"own processes count in it). Before each run it waited until other programs kept under "
        f"{a.quiet_below} cores busy (measured over 2 s): they kept {statistics.median(others):.2f} busy "
        f"(median; at most {max(others):.2f}).",
        "",
        "Micro-batch 64 × K 4 per process, one thread per process, SGD with momentum, Fashion-MNIST; "
        "samples/s counts every process's samples over the training time (median of the rounds, and the "
        "best run: on a shared machine interference only slows a run down, so the best of N is the least "
        "disturbed figure; the variants alternate, their order rotating from round to round), after "
        f"{WARMUP_STEPS} warm-up updates on every side (with torch.compile, the compilation). Eager: PyTorch "
        f"{torch_version}, DistributedDataParallel on Gloo with model.no_sync() (bench/dp_reference.py); "
        "compiled: the same DDP module under torch.compile (inductor).",
        "",
    ]
    for name, (steps, runs, allreduces, sync_seconds) in results.items():
        lines += [f"## {name} ({steps} updates per run)", "", "| variant | samples/s (median) | min … max | "
                  "all-reduces / update | sync ms / update |", "|---|---:|---:|---:|---:|"]
        for key, label, _ in VARIANTS:
            xs = runs[key]
            if not xs:
                continue
            ar = allreduces.get(key)
            ms = sync_seconds[key]
            lines.append(f"| {label} | {med(xs):,.0f} | {min(xs):,.0f} … {max(xs):,.0f} | "
                         f"{'' if ar is None else f'{ar:g}'} | {f'{med(ms) * 1e3:.2f}' if ms else ''} |")
        e1, e2, e2s, p1, p2, p2s = (med(runs[k]) for k in ("e1", "e2", "e2s", "p1", "p2", "p2s"))
        b1, b2, b2s, q1, q2, q2s = (max(runs[k]) for k in ("e1", "e2", "e2s", "p1", "p2", "p2s"))
        e1x2, b1x2 = med(runs["e1x2"]), max(runs["e1x2"])
        c1, c2, d1, d2 = med(runs["c1"]), med(runs["c2"]), max(runs["c1"]), max(runs["c2"])
        lines += ["", "| ratio (medians; best runs in brackets) | engine | eager |", "|---|---:|---:|",
                  f"| 2 processes / 1 process | {e2 / e1:.2f} × ({b2 / b1:.2f} ×) | {p2 / p1:.2f} × ({q2 / q1:.2f} ×) |",
                  f"| 2 independent runs side by side / 1 process (the ceiling here) | {e1x2 / e1:.2f} × "
                  f"({b1x2 / b1:.2f} ×) | |",
                  f"| no_sync / sync every micro-batch | {e2 / e2s:.2f} × ({b2 / b2s:.2f} ×) | "
                  f"{p2 / p2s:.2f} × ({q2 / q2s:.2f} ×) |",
                  f"| engine 2 processes / eager DDP 2 processes | {e2 / p2:.2f} × ({b2 / q2:.2f} ×) | |",
                  f"| engine 2 processes / compiled DDP 2 processes | {e2 / c2:.2f} × ({b2 / d2:.2f} ×) | |",
                  f"| engine 1 process / compiled 1 process | {e1 / c1:.2f} × ({b1 / d1:.2f} ×) | |", ""]
        lines += no_sync_ceiling(e2, med(sync_seconds["e2"]), med(sync_seconds["e2s"]), allreduces.get("e2s"))
    with open(a.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: GPL-3.0-or-later
