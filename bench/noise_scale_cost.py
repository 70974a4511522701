#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What measuring the gradient noise scale costs a run (docs/noise-scale.md): the same
runs with the estimator on and off (ACCUM_NOISE_SCALE=0), alternating on, off, on, off.

    bench/noise_scale_cost.py [--build build-libtorch2] [--rounds 5] [--output FILE]
    bench/noise_scale_cost.py --instructions [--only TEXT] [--output FILE]

With --instructions, instead: the instructions the estimator adds to a window, under
valgrind's callgrind (which counts every instruction the process executes, so the figure
does not depend on what else runs on the machine): runs of N₁ and N₂ steps, on and off,
give ((on₂ − off₂) − (on₁ − off₁)) / (off₂ − off₁), the start-up cancelled out. The
memory records, which a run makes every 250 ms of wall time (more of them in a slower run
under callgrind, none of them the estimator's), are left out of every count.

Two figures per configuration, each the median over the rounds:
  - CPU: the process's user + system CPU seconds (one compute thread), less a
    one-step run's (start-up, data loading), on against off. CPU time barely
    moves when other programs share the machine, where wall time does.
  - wall: summary.json's samples_per_second (training only), off over on − 1.
"""
import argparse
import json
import os
import re
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


# (N₁, N₂) optimizer steps under callgrind (about 50 × slower than a run outside it).
INSTRUCTION_STEPS = {"mlp 8": (100, 300), "mlp 64": (20, 60), "cnn": (8, 24), "transformer": (2, 6)}


def instructions(program, args, steps, out, noise_on):
    env = dict(os.environ, ACCUM_ADAPTIVE_THREADS="0", ACCUM_NOISE_SCALE="1" if noise_on else "0")
    args = [x if i == 0 or args[i - 1] != "--max-steps" else str(steps) for i, x in enumerate(args)]
    profile = out + ".callgrind"
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + profile, program] + args + [
        "--eval-strategy", "no", "--save-strategy", "no", "--threads", "1", "--quiet", "--output-dir", out,
        "--overwrite-output-dir"]
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(argv), p.stderr[-2000:]))
    listing = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", profile],
                             capture_output=True, text=True, check=True).stdout
    total = records = None
    for line in listing.splitlines():
        found = re.match(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if not found:
            continue
        count = int(found.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in found.group(2):
            total = count
        elif "accum::RunContext::emit_memory_record()" in found.group(2):
            records = max(records or 0, count)
    if total is None:
        sys.exit("callgrind_annotate gave no total for " + " ".join(argv))
    return total - (records or 0)


def instruction_rows(program, configs, out):
    lines = ["| run | steps (N₁, N₂) | instructions a window, off | added by the estimator | cost |",
             "|---|---|---|---|---|"]
    for name, args in configs:
        n1, n2 = next(v for k, v in INSTRUCTION_STEPS.items() if name.startswith(k))
        on1, off1, on2, off2 = (instructions(program, args, n, out, on) for n, on in
                                ((n1, True), (n1, False), (n2, True), (n2, False)))
        window = (off2 - off1) / (n2 - n1)
        added = ((on2 - off2) - (on1 - off1)) / (n2 - n1)
        print("%s: %d, %d, %d, %d instructions (on/off at %d and %d steps)" % (name, on1, off1, on2, off2, n1, n2),
              flush=True)
        lines.append("| %s | %d, %d | %.3g M | %.3g k | %+.2f %% |" % (name, n1, n2, window / 1e6, added / 1e3,
                                                                    100 * added / window))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build-libtorch2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output")
    parser.add_argument("--only", default="", help="the configurations whose name holds this text")
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    a = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    program = os.path.join(root, a.build, "app", "accum-run")
    rows = []
    configs = [c for c in CONFIGS if a.only in c[0]]
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "run")
        if a.instructions:
            return write("\n".join(instruction_rows(program, configs, out)) + "\n", a.output)
        for name, args in configs:
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
    write("\n".join(lines) + "\n", a.output)


def write(text, output):
    print(text)
    if output:
        with open(output, "w") as f:
            f.write("<!-- %s: %s -->\n%s" % (time.strftime("%Y-%m-%d"), " ".join(sys.argv), text))


if __name__ == "__main__":
    main()
