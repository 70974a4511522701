#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What measuring the gradient noise scale costs a run (docs/noise-scale.md): the same
runs with the estimator on and off (ACCUM_NOISE_SCALE=0), alternating on, off, on, off.

    bench/noise_scale_cost.py [--build build-libtorch2] [--rounds 5] [--output FILE]

Two figures per configuration, each the median over the rounds:
  - CPU: the process's user + system CPU seconds (one compute thread), less a
    one-step run's (start-up, data loading), on against off. CPU time barely
    moves when other programs share the machine, where wall time does.
  - wall: summary.json's samples_per_second (training only), off over on − 1.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = [  # micro-batch × K from the estimator's worst case (a window of one tiny micro-batch more) up
    ("mlp 8 × 2", ["--model", "mlp", "--batch-size", "8", "--accumulation-steps", "2", "--max-steps", "1500"]),
    ("mlp 64 × 4 (the default experiment)", ["--model", "mlp", "--batch-size", "64", "--accumulation-steps", "4",
                                             "--max-steps", "300"]),
    ("cnn 16 × 2", ["--model", "cnn", "--batch-size", "16", "--accumulation-steps", "2", "--max-steps", "120"]),
    ("transformer 16 × 2 (synthetic-lm)", ["--model", "transformer", "--dataset", "synthetic-lm", "--batch-size",
                                           "16", "--accumulation-steps", "2", "--max-steps", "40"]),
]


def run(program, args, out, noise_on):
    env = dict(os.environ, ACCUM_ADAPTIVE_THREADS="0")
    if not noise_on:
        env["ACCUM_NOISE_SCALE"] = "0"
    argv = [program] + args + ["--eval-strategy", "no", "--save-strategy", "no", "--threads", "1", "--quiet",
                               "--output-dir", out, "--overwrite-output-dir"]
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("failed (%d): %s\n%s" % (status, " ".join(argv), p.stderr.read().decode()[-2000:]))
    summary = json.load(open(os.path.join(out, "summary.json")))
    return usage.ru_utime + usage.ru_stime, summary["samples_per_second"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build-libtorch2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output")
    parser.add_argument("--only", default="", help="the configurations whose name holds this text")
    a = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    program = os.path.join(root, a.build, "app", "accum-run")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "run")
        for name, args in [c for c in CONFIGS if a.only in c[0]]:
            start_args = [x if i == 0 or args[i - 1] != "--max-steps" else "1" for i, x in enumerate(args)]
            startup = statistics.median(run(program, start_args, out, True)[0] for _ in range(3))
            cpu, wall = [], []
            for r in range(a.rounds):
                cpu_on, rate_on = run(program, args, out, True)
                cpu_off, rate_off = run(program, args, out, False)
                cpu.append((cpu_on - cpu_off) / (cpu_off - startup))
                wall.append(rate_off / rate_on - 1)
                print("%s, round %d: CPU %.3f s on, %.3f s off (start-up %.3f s); %.0f and %.0f samples/s" %
                      (name, r + 1, cpu_on, cpu_off, startup, rate_on, rate_off), flush=True)
            rows.append((name, statistics.median(cpu), min(cpu), max(cpu), statistics.median(wall), min(wall),
                         max(wall)))
    lines = ["| run | CPU cost: median (range) | wall cost: median (range) |", "|---|---|---|"]
    for name, c, c0, c1, w, w0, w1 in rows:
        lines.append("| %s | %+.1f %% (%+.1f to %+.1f) | %+.1f %% (%+.1f to %+.1f) |" %
                     (name, 100 * c, 100 * c0, 100 * c1, 100 * w, 100 * w0, 100 * w1))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write("<!-- %s: %s -->\n%s" % (time.strftime("%Y-%m-%d"), " ".join(sys.argv), text))


if __name__ == "__main__":
    main()
