#!/usr/bin/python3
"""A busy machine: does accum-run keep its speed when another program takes a core?

Quiet, and with one core taken by a process that spins (this script starts it
before the busy runs and ends it after them), runs side by side, alternating:
the engine's default thread count (it adapts to the other load), `--threads 1`,
`--threads 2`, and eager PyTorch 2.11 at its default (one thread per core), for
the MLP and the CNN at micro-batch 64 × 4, fp32. Each round runs the quiet block
and then the busy block, the implementations' order changing from round to
round so that over four rounds each one runs in every place and after every
other once (a run may leave the next one a warm or a busy machine).
samples/s after the warm-up steps (bench/torch_reference.py,
rate_after_warmup), so the default's trials of other thread counts are inside
the clock. The default's log says which thread count it ended with and why;
the table gives the counts it ended with.

Targets: busy, the default reaches at least 0.8 × the better of 1 and 2 threads
in the same block; quiet, it is the better fixed count's equal within noise.

Usage: bench/busy_machine.py [--rounds 4] [--build build-libtorch2] [--output bench/BUSY_MACHINE.md]
"""
import argparse
import datetime
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time

from cpu_quiet import wait_for_idle
from torch_reference import ROOT, WARMUP_STEPS, Reference, accum_run_timed, torch2_python

HERE = os.path.dirname(os.path.abspath(__file__))
IMPLS = ["default", "1 thread", "2 threads", "eager 2.11"]
# Timed optimizer steps of 64 × 4 per run: a few seconds quiet at 2 threads.
STEPS = {"mlp": 1000, "cnn": 80}
NAMES = {"mlp": "MLP", "cnn": "CNN"}


def balanced_orders(n):
    """A Williams square of n (even) rows: each index once in every place, and
    right after every other index once."""
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    return [[(i + r) % n for i in first] for r in range(n)]


ORDERS = balanced_orders(len(IMPLS))


def engine_run(program, model, steps, threads):
    """(samples/s after the warm-up, others' share, the run's last 'threads:' log line)."""
    options = ["--model", model, "--dataset", "fashion-mnist", "--batch-size", "64", "--accumulation-steps", "4",
               "--max-steps", str(steps + WARMUP_STEPS), "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9",
               "--logging-steps", "100000"]
    log = []
    sps, others, _, _ = accum_run_timed(program, options, threads, log)
    said = [line[line.index("threads: "):] for line in log if "threads: " in line]  # after the style's "[…] "
    return sps, others, said[-1] if said else ""


class Spinner:
    """A process that spins on one core until the block ends."""

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.5)  # scheduled before the first run starts
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()


def fmt(values):
    if not values:
        return "—"
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4, help="4 or a multiple: every order once")
    ap.add_argument("--build", default=f"{ROOT}/build-libtorch2", help="the engine build (its app/accum-run)")
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--idle", type=float, default=0.85, help="CPU idle fraction to wait for before a quiet block")
    ap.add_argument("--wait", type=float, default=300, help="seconds to wait at most for that idle fraction")
    ap.add_argument("--output", help="write the results here (Markdown), e.g. bench/BUSY_MACHINE.md")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error(f"--rounds: {a.rounds} is not a positive number of rounds")
    models = a.models.split(",")
    if unknown := [m for m in models if m not in NAMES]:
        ap.error(f"--models: {', '.join(unknown)} unknown (known: {', '.join(NAMES)})")
    program = f"{a.build}/app/accum-run"
    if not os.access(program, os.X_OK):
        ap.error(f"--build: no accum-run in {a.build}/app")
    python2 = torch2_python()

    started = time.time()
    results = {}   # (model, condition, impl) -> [samples/s]
    others = {}    # condition -> [others' share of each run]
    idles = []
    said = {}      # (model, condition) -> [the default's last threads line]
    for model in models:
        steps = STEPS[model]
        eager = Reference(python2, model, 64, 4, os.cpu_count())
        try:
            runs = {"default": lambda: engine_run(program, model, steps, 0),
                    "1 thread": lambda: engine_run(program, model, steps, 1),
                    "2 threads": lambda: engine_run(program, model, steps, 2),
                    "eager 2.11": lambda: eager.run(steps) + ("",)}
            for r in range(a.rounds):
                order = [IMPLS[i] for i in ORDERS[r % len(ORDERS)]]
                for condition in ("quiet", "busy"):
                    if condition == "quiet":
                        idles.append(wait_for_idle(a.idle, a.wait))
                    spinner = Spinner() if condition == "busy" else None
                    try:
                        if spinner:
                            spinner.__enter__()
                        for name in order:
                            sps, share, line = runs[name]()
                            results.setdefault((model, condition, name), []).append(sps)
                            others.setdefault(condition, []).append(share)
                            if line and name == "default":  # the fixed counts say theirs too
                                said.setdefault((model, condition), []).append(line)
                            print(f"{NAMES[model]} round {r + 1} {condition} {name}: {sps:,.0f} samples/s "
                                  f"(others {share:.0%}) {line}", flush=True)
                    finally:
                        if spinner:
                            spinner.__exit__(None, None, None)
        finally:
            eager.close()
    minutes = (time.time() - started) / 60

    lines = [
        "| model | machine | default | 1 thread | 2 threads | eager 2.11 | default / better of 1 and 2 | paired | "
        "default's count at the end |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for model in models:
        for condition in ("quiet", "busy"):
            med = {n: statistics.median(results[(model, condition, n)]) for n in IMPLS}
            better = max(med["1 thread"], med["2 threads"])
            ratio = med["default"] / better
            counts = sorted({m.group(1) for l in said.get((model, condition), [])
                             if (m := re.match(r"threads: (?:now |kept )?(\d+)", l))})
            paired = statistics.median(d / max(one, two) for d, one, two in zip(
                *(results[(model, condition, n)] for n in ("default", "1 thread", "2 threads"))))
            lines.append(f"| {NAMES[model]} 64 × 4 | {condition} | " +
                         " | ".join(fmt(results[(model, condition, n)]) for n in IMPLS) +
                         f" | **{ratio:.2f}×** | {paired:.2f}× | {', '.join(counts) or '—'} |")
            target = 0.8 if condition == "busy" else 0.95
            verdicts.append(f"{NAMES[model]} {condition}: {ratio:.2f}× (target ≥ {target}"
                            f"{'' if condition == 'busy' else ', i.e. within noise'}) "
                            f"{'met' if ratio >= target else 'NOT met'}")
    share = {c: (min(v), max(v)) for c, v in others.items()}
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    header = [
        "# A busy machine: the engine's speed when another program takes a core",
        "",
        "Written by `bench/busy_machine.py`. Quiet, and with one core taken by a process that spins (started",
        "before the busy runs and ended after them), side by side and alternating: accum-run's default thread",
        "count, which adapts to the machine's other load (docs/accum-run.md, \"On a busy machine\"),",
        "`--threads 1`, `--threads 2`, and eager PyTorch 2.11 at its default (one thread per core). fp32,",
        "micro-batch 64 × 4, samples/s after the warm-up steps: the default's trials of other counts are inside",
        "the clock. Targets: busy, the default at least 0.8 × the better of 1 and 2 threads under the same load;",
        "quiet, the better fixed count's equal within noise.",
        "",
        f"Command: `bench/busy_machine.py --rounds {a.rounds}` ({datetime.date.today().isoformat()}, "
        f"{minutes:.0f} minutes), build `{os.path.relpath(a.build, ROOT)}`; {cpu}, {os.cpu_count()} cores.",
        "",
        f"Each figure is the median samples/s of {a.rounds} runs with the range in brackets; *paired*: the "
        f"median over rounds of the same ratio within a round's block. CPU idle before the "
        f"quiet blocks {min(idles):.2f}–{max(idles):.2f} (threshold {a.idle}); other processes took "
        + ", ".join(f"{lo:.0%}–{hi:.0%} of the CPUs in the {c} runs" for c, (lo, hi) in share.items())
        + " (in the busy runs the spinner is one of them: 50 % on 2 cores).",
        "",
    ]
    text = "\n".join(header + lines + ["", *("- " + v for v in verdicts)]) + "\n"
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    # Stopped with SIGTERM: the spinner and the reference process end too (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("busy_machine.py: stopped"))
    try:
        sys.exit(main())
    except RuntimeError as e:  # a run failed: say which, without a traceback
        sys.exit(f"busy_machine.py: {e}")
# SPDX-License-Identifier: GPL-3.0-or-later
