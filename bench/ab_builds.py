#!/usr/bin/python3
"""Two builds of accum-run side by side: does a change leave the engine's speed
where it was? Runs the same experiments with build A and build B alternating
(A B A B …, so both see the same machine), checks that both completed with the
same step losses (a change of structure must not change a number), and prints
the median samples/s of each, their ranges and the ratio B / A.

Usage: bench/ab_builds.py A/accum-run B/accum-run [--rounds N] [--output FILE.md]

Each run is --eval-strategy no, --save-strategy no, one thread per run as the
engine picks it for the model (the default), on the CPU. samples/s comes from the
step records after the warm-up steps (bench/torch_reference.py, rate_after_warmup),
as bench/run_bench.py counts it. A build's first run of each experiment is a
warm-up too, not counted.
"""
import argparse
import os
import platform
import statistics
import sys

from torch_reference import accum_run_timed

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, accum-run options): the three models at 64 × 4 and the MLP at 256 × 1.
EXPERIMENTS = [
    ("mlp 64x4", ["--model", "mlp", "--dataset", "fashion-mnist", "--batch-size", "64", "--accumulation-steps", "4",
                  "--max-steps", "150"]),
    ("mlp 256x1", ["--model", "mlp", "--dataset", "fashion-mnist", "--batch-size", "256", "--accumulation-steps", "1",
                   "--max-steps", "150"]),
    ("cnn 64x4", ["--model", "cnn", "--dataset", "fashion-mnist", "--batch-size", "64", "--accumulation-steps", "4",
                  "--max-steps", "12"]),
    ("transformer 64x4", ["--model", "transformer", "--dataset", "synthetic-pairs", "--batch-size", "64",
                          "--accumulation-steps", "4", "--max-steps", "40"]),
]


def run_once(program, options):
    """samples/s after the warm-up (bench/torch_reference.py) and the step losses."""
    sps, _, _, steps = accum_run_timed(program, options, threads=0)
    return sps, [s["loss"] for s in steps]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="build A's accum-run (the reference)")
    ap.add_argument("b", help="build B's accum-run (the change)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--output", help="also write the table as Markdown here")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be 1 or more")
    for p in (args.a, args.b):
        if not os.access(p, os.X_OK):
            ap.error(f"{p}: not an executable accum-run")

    rows = []
    for name, options in EXPERIMENTS:
        speeds = {"A": [], "B": []}
        losses = {}
        for r in range(args.rounds + 1):
            for key, program in (("A", args.a), ("B", args.b)) if r % 2 == 0 else (("B", args.b), ("A", args.a)):
                sps, steps = run_once(program, options)
                if any(x != x for x in steps):
                    raise SystemExit(f"{name}: build {key} logged a NaN loss")
                losses[key] = steps
                if r > 0:  # round 0 warms up
                    speeds[key].append(sps)
        if not losses["A"] or len(losses["A"]) != len(losses["B"]):
            raise SystemExit(f"{name}: the builds ran {len(losses['A'])} and {len(losses['B'])} steps")
        worst = max(abs(x - y) for x, y in zip(losses["A"], losses["B"]))
        ma, mb = statistics.median(speeds["A"]), statistics.median(speeds["B"])
        rows.append((name, ma, min(speeds["A"]), max(speeds["A"]), mb, min(speeds["B"]), max(speeds["B"]), mb / ma,
                     worst))
        print(f"{name}: A {ma:.0f} samples/s, B {mb:.0f}, B/A {mb / ma:.3f}, largest |Δ loss| {worst:.2e}",
              flush=True)

    lines = [
        f"A: `{args.a}`  \nB: `{args.b}`  ",
        f"{args.rounds} rounds after a warm-up, alternating; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores.",
        "",
        "| experiment | A samples/s (median, range) | B samples/s (median, range) | B / A | largest \\|Δ loss\\| |",
        "|---|---|---|---|---|",
    ]
    for name, ma, la, ha, mb, lb, hb, ratio, worst in rows:
        lines.append(f"| {name} | {ma:.0f} ({la:.0f}–{ha:.0f}) | {mb:.0f} ({lb:.0f}–{hb:.0f}) | {ratio:.3f} | "
                     f"{worst:.1e} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:  # a run failed: say which, without a traceback
        sys.exit(f"ab_builds.py: {e}")
# SPDX-License-Identifier: GPL-3.0-or-later
