#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a user sees end to end: accum-run training the same model from a
TorchScript module (--model X.pt) and from its compiled training step
(--model X.pt2), the runs alternated (pt, pt2, pt, pt2, ...) so that a shared
machine's load falls on both alike.

    PY=$(scripts/setup-libtorch2.sh --python)
    $PY examples/pretrained_classifier.py minilm.pt minilm_data.pt --train 96
    $PY bench/pt2_speed.py --model minilm --runs pt2 --rounds 1   # prints the package's path
    $PY bench/pt2_run_speed.py ACCUM_RUN --data minilm_data.pt --model ts=minilm.pt --model pt2=PACKAGE.pt2 \\
        [--rounds 3] [--steps 4] [--threads 1] [--extra=--mixed-precision --extra=bf16]

Each run: --batch-size 16 --accumulation-steps 1 --max-steps STEPS --threads T,
AdamW, no evaluation, no checkpoint. Prints per model the summary's samples/s
(every step, the first with its one-time costs) and the steady samples/s of the
steps after the first --skip (from metrics.jsonl's elapsed_s), median and range over
the rounds, and each model's steady speed against the first model's (the median
of the per-round ratios).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def one_run(accum_run, model, args, out_dir):
    cmd = [accum_run, "--model", model, "--dataset", "tensors", "--data", args.data, "--batch-size", str(args.batch),
           "--accumulation-steps", "1", "--max-steps", str(args.steps), "--threads", str(args.threads),
           "--optimizer", "adamw", "--lr", "5e-5", "--eval-strategy", "no", "--save-strategy", "no",
           "--logging-steps", "1", "--output-dir", out_dir, "--quiet"] + args.extra
    done = subprocess.run(cmd, capture_output=True, text=True)
    summary_path = os.path.join(out_dir, "summary.json")
    if done.returncode != 0 or not os.path.exists(summary_path):
        sys.exit("accum-run failed (%d): %s\n%s" % (done.returncode, " ".join(cmd), done.stderr[-2000:]))
    with open(summary_path) as f:
        summary = json.load(f)
    if summary.get("status") != "completed":
        sys.exit("accum-run did not complete: %s" % summary)
    with open(os.path.join(out_dir, "metrics.jsonl")) as f:
        steps = [r for r in map(json.loads, f) if r.get("type") == "step"]
    if any(r["loss"] != r["loss"] for r in steps):
        sys.exit("accum-run %s: a NaN loss" % model)
    if len(steps) <= args.skip:
        sys.exit("accum-run %s: --steps must exceed --skip" % model)
    first = steps[args.skip - 1]
    steady = (steps[-1]["samples_seen"] - first["samples_seen"]) / (steps[-1]["elapsed_s"] - first["elapsed_s"])
    return summary["samples_per_second"], steady, steps[-1]["loss"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("accum_run")
    p.add_argument("--data", required=True)
    p.add_argument("--model", action="append", required=True, metavar="NAME=FILE")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--skip", type=int, default=1, help="steps left out of the steady rate (default 1)")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--extra", action="append", default=[], metavar="ARG",
                   help="one more accum-run argument for every run (repeat: --extra=--mixed-precision --extra=bf16)")
    args = p.parse_args()
    if args.skip < 1 or args.steps <= args.skip:
        p.error("--skip must be 1 or more and less than --steps")
    models = [m.split("=", 1) for m in args.model]
    results = {name: [] for name, _ in models}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, path in models:
                results[name].append(one_run(args.accum_run, path, args, os.path.join(tmp, "%s-%d" % (name, r))))
                print("round %d %-6s summary %.2f samples/s, steady %.2f samples/s, last loss %.4f" % (
                    r + 1, name, *results[name][-1]), flush=True)
    first = results[models[0][0]]
    print("\n%d steps of %d at --threads %d, %d rounds alternated:" % (args.steps, args.batch, args.threads, args.rounds))
    print("| model | summary samples/s, median (range) | steady samples/s, median (range) | steady against %s |"
          % models[0][0])
    print("|---|---|---|---|")
    for name, _ in models:
        s = [x[0] for x in results[name]]
        st = [x[1] for x in results[name]]
        ratios = [a[1] / b[1] for a, b in zip(results[name], first)]
        print("| %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.2f × (%.2f–%.2f) |" % (
            name, statistics.median(s), min(s), max(s), statistics.median(st), min(st), max(st),
            statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
