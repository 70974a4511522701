#!/usr/bin/python3
"""bf16 against fp32 in the engine's training runs: accum-run's samples/s for the
three models at micro-batch 64 × 4, side by side in one go.

Usage: bench/amp_run_bench.py [--rounds N] [--build DIR] [--idle F] [--wait S] [--output FILE]
                              [--models MLP,CNN,...] [--variants bf16,bf16-aten-loss,...]

Variants, each an accum-run of the same configuration (SGD lr 0.05 momentum 0.9,
--eval-strategy no; samples/s from its step records after the warm-up steps of
bench/torch_reference.py), then the PyTorch 2.11 references (eager-fp32, eager-bf16,
compile-fp32, compile-bf16: bench/eager_reference.py in one process each, the same
warm-up and, with torch.compile, the compilation out of the clock; none for the LM):
  fp32        --mixed-precision no (the fused CPU kernels where they serve: the MLP's
              Linear-ReLU stack, the transformer's attention, every model's loss)
  fp32-aten   --mixed-precision no --cpu-kernels aten (LibTorch's operators throughout)
  bf16        --mixed-precision bf16: the forward under CPU autocast; the MLP's dense
              stack runs as one bf16 node (fused_dense_bf16), the CNN's ReLU + max-pool
              through the fp32 fused kernel on its activations cast up, attention steps
              aside (an fp32 kernel) and ATen runs it in bf16; the loss casts the bf16
              logits to fp32 and the fused loss serves
  bf16-aten-loss  the same with --cpu-kernels aten: the loss through ATen's
              autocast cross-entropy (which casts to fp32 itself)

The variants run in turn within a round, the order rotating from round to round, so a
machine that drifts slower favours none. The machine is shared: before each run the
script waits (up to S seconds, 600 by default) until the CPUs were at least F idle
over two seconds; it records the idle fraction it found, the load average and the
share of the CPUs other processes took while the run ran (busy time less the run's
own), and runs again (up to --retries times) when that share was above 1 - F; a
measurement still disturbed after the last try is left out of the medians.
"""
import argparse
import json
import os
import statistics
import sys

from cpu_quiet import wait_for_idle
from torch_reference import WARMUP_STEPS, FreshCache, Reference, accum_run_timed, torch2_python

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODELS = [
    # name, model, dataset, max optimizer steps (about 1-3 s of training each here)
    ("MLP", "mlp", "fashion-mnist", 600),
    ("CNN", "cnn", "fashion-mnist", 40),
    ("Transformer", "transformer", "synthetic-pairs", 40),
    ("Transformer-LM", "transformer", "synthetic-lm", 40),
]
VARIANTS = [
    ("fp32", []),
    ("fp32-aten", ["--cpu-kernels", "aten"]),
    ("bf16", ["--mixed-precision", "bf16"]),
    ("bf16-aten-loss", ["--mixed-precision", "bf16", "--cpu-kernels", "aten"]),
]
# The PyTorch 2.11 references (bench/torch_reference.py): the same model and loop in
# eager PyTorch and under torch.compile, fp32 and bf16 autocast, the engine's threads.
REFERENCES = [("eager-fp32", "fp32", False), ("eager-bf16", "bf16", False),
              ("compile-fp32", "fp32", True), ("compile-bf16", "bf16", True)]
# The engine's threads for each model at 64 × 4 (engine/src/kernels/kernels.cpp, choose_threads).
ENGINE_THREADS = {"mlp": min(os.cpu_count() or 1, 4), "cnn": min(os.cpu_count() or 1, 4), "transformer": 1}


REF = {r[0]: r for r in REFERENCES}
DATASET_OF = {"mlp": "fashion-mnist", "cnn": "fashion-mnist", "transformer": "synthetic-pairs"}


def engine_run(build, model, dataset, steps, args):
    options = ["--model", model, "--dataset", dataset, "--batch-size", "64", "--accumulation-steps", "4",
               "--max-steps", str(steps + WARMUP_STEPS), "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9",
               *args]
    sps, others, summary, _ = accum_run_timed(f"{build}/app/accum-run", options, threads=0)
    return sps, others, summary.get("cpu_kernels")


def measure(a, r, name, run, variant):
    """One variant's run, again (at most --retries times) while other processes took
    more than 1 - IDLE of the CPUs: (samples/s, idle before, load, others' share)."""
    for attempt in range(a.retries + 1):
        idle = wait_for_idle(a.idle, a.wait)
        load = os.getloadavg()[0]
        sps, others, kernels = run()
        print(json.dumps({"round": r, "model": name, "variant": variant, "samples_per_second": round(sps),
                          "idle_before": round(idle, 3), "others_during": round(others, 3),
                          "load_1min": round(load, 2), "attempt": attempt, "cpu_kernels": kernels}), flush=True)
        if others <= 1 - a.idle:
            break
    return sps, idle, load, others


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--build", default=f"{ROOT}/build")
    ap.add_argument("--idle", type=float, default=0.85, help="CPU idle fraction to wait for before each run")
    ap.add_argument("--wait", type=float, default=600, help="seconds to wait at most for that idle fraction")
    ap.add_argument("--retries", type=int, default=2,
                    help="run again (at most this often) when other processes took more than 1 - IDLE of the "
                         "CPUs; a measurement still disturbed after the last try is left out of the medians")
    ap.add_argument("--output", help="write the Markdown table here (else stdout only)")
    ap.add_argument("--models", default="MLP,CNN,Transformer", help="which of " + ",".join(m[0] for m in MODELS))
    ap.add_argument("--variants", default=",".join(v[0] for v in VARIANTS + REFERENCES),
                    help="which variants, in this order")
    a = ap.parse_args()
    models = [m for m in MODELS if m[0] in a.models.split(",")]
    variants = [v for name in a.variants.split(",") for v in VARIANTS + [(r[0], None) for r in REFERENCES]
                if v[0] == name]
    if not models or not variants:
        ap.error("--models/--variants: none of the names given is known")
    if a.rounds < 1:
        ap.error(f"--rounds: {a.rounds} is not a positive number of rounds")
    if not os.path.exists(f"{a.build}/app/accum-run"):
        print(f"amp_run_bench.py: no accum-run in {a.build}/app; build it first or pass --build DIR", file=sys.stderr)
        return 2
    results = {(m[0], v[0]): [] for m in models for v in variants}
    conditions = []
    python2 = torch2_python() if any(v[0] in dict((r[0], r) for r in REFERENCES) for v in variants) else None
    with FreshCache() as cache:
        for name, model, dataset, steps in models:
            refs = {}
            try:
                runs = {}
                for variant, args in variants:
                    if variant in REF:
                        _, precision, compile = REF[variant]
                        if model not in ENGINE_THREADS or dataset != DATASET_OF[model]:
                            continue  # no reference for this model (the LM)
                        refs[variant] = Reference(python2, model, 64, 4, ENGINE_THREADS[model], precision, compile,
                                                  cache.folder(f"{name}-{variant}"))
                        runs[variant] = lambda ref=refs[variant]: (*ref.run(steps), None)
                    else:
                        runs[variant] = lambda args=args: engine_run(a.build, model, dataset, steps, args)
                present = [v for v in variants if v[0] in runs]
                for r in range(a.rounds):
                    order = present[r % len(present):] + present[:r % len(present)]
                    for variant, _ in order:
                        sps, idle, load, others = measure(a, r, name, runs[variant], variant)
                        conditions.append((idle, load, others))
                        if others <= 1 - a.idle:  # else left out: other processes took the CPUs
                            results[(name, variant)].append(sps)
            finally:
                for ref in refs.values():
                    ref.close()
    names = [v[0] for v in variants]
    ratios = [(x, y) for x, y in [("bf16", "fp32"), ("bf16", "fp32-aten"), ("bf16", "bf16-aten-loss"),
                                  ("bf16", "eager-bf16"), ("bf16", "compile-bf16")]
              if x in names and y in names]
    lines = ["| model | " + " | ".join(names) + "".join(f" | {x} / {y}" for x, y in ratios) + " |",
             "|---|" + "---|" * (len(names) + len(ratios))]
    for name, *_ in models:
        kept = {v: results[(name, v)] for v in names}
        med = {v: statistics.median(kept[v]) if kept[v] else float("nan") for v in names}
        cells = [f"{med[v]:,.0f} ({min(kept[v]):,.0f}–{max(kept[v]):,.0f}; n={len(kept[v])})" if kept[v] else "—"
                 for v in names]
        for x, y in ratios:
            cells.append(f"**{med[x] / med[y]:.2f}×**" if kept[x] and kept[y] else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    idle = [c[0] for c in conditions]
    load = [c[1] for c in conditions]
    others = [c[2] for c in conditions]
    quiet = sum(1 for o in others if o <= 1 - a.idle)
    lines += ["", f"{a.rounds} rounds, medians with the range; CPU idle before the runs "
              f"{min(idle):.2f}–{max(idle):.2f} (threshold {a.idle}, waited {a.wait:.0f} s at most), 1-minute load average "
              f"{min(load):.2f}–{max(load):.2f}; other processes took {min(others):.0%}–{max(others):.0%} of the "
              f"CPUs during the runs; {len(others) - quiet} of {len(others)} measurements left out (more than "
              f"{1 - a.idle:.0%} taken by others after {a.retries + 1} tries); {os.cpu_count()} CPUs."]
    text = "\n".join(lines)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: GPL-3.0-or-later
