#!/usr/bin/env python3
"""The same runs with two accum-run builds (LibTorch 1.13 and 2.11), or on two
devices with one build, step losses compared.

For each style (pytorch, accelerator, trainer) and model (MLP, CNN) both sides
train 20 optimizer steps of 32 x 4 on Fashion-MNIST from the same seed, one
thread, with LibTorch's operators (--cpu-kernels aten) and with the engine's
fused kernels (the default). Both runs must complete with 20 step records and
finite losses before anything is compared; then every step's loss and
learning rate must agree.

Tolerance between the two LibTorch builds (2e-5, absolute): they run the same
maths on different BLAS and convolution libraries (Debian's 1.13 on OpenBLAS,
the 2.11 wheel on MKL and oneDNN), whose float32 sums are ordered differently,
and 20 updates of SGD with momentum carry the last bits into the loss.
Measured here (2-core x86-64, one thread): with LibTorch's operators 1.8e-7
(MLP) and 1.0e-7 (CNN); with the fused kernels 0 (MLP: the engine's own GEMM
loops, the same in both) and 3.9e-6 (CNN: its im2col convolution calls each
build's BLAS). 2e-5 is five times the largest, while a wrong formula (a loss
not divided by K, a skipped update) moves the loss by 1e-2 or more within 20
steps. The learning rates are the engine's own arithmetic and must agree to
1e-12. The largest difference is printed on every run.

Usage: compare_builds.py REFERENCE_ACCUM_RUN CANDIDATE_ACCUM_RUN [--data DIR] [--work DIR]
         [--reference-device D] [--candidate-device D] [--kernels aten,fused]
         [--tolerance T] [--json FILE]
Exit 0 when every pair agrees, 1 otherwise; 77 (skip) without Fashion-MNIST.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

STEPS = 20
LR_TOLERANCE = 1e-12


def steps_of(metrics):
    with open(metrics) as f:
        return [r for r in map(json.loads, f) if r.get("type") == "step"]


def run(exe, args, out):
    # A rerun starts clean: the folder is this script's own (WORK/ref-…, cand-…).
    shutil.rmtree(out, ignore_errors=True)
    cmd = [exe, *args, "--output-dir", out, "--quiet"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    records = steps_of(os.path.join(out, "metrics.jsonl"))
    if len(records) != STEPS:
        raise RuntimeError(f"{exe}: {len(records)} step records, expected {STEPS}")
    for r in records:
        if not isinstance(r.get("loss"), (int, float)) or not math.isfinite(r["loss"]):
            raise RuntimeError(f"{exe}: step {r.get('step')} has loss {r.get('loss')!r}")
    return records


def main():
    p = argparse.ArgumentParser()
    p.add_argument("reference")
    p.add_argument("candidate")
    p.add_argument("--data", default=os.environ.get("ACCUM_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"))
    p.add_argument("--work")
    p.add_argument("--reference-device", default="cpu")
    p.add_argument("--candidate-device", default="cpu")
    p.add_argument("--kernels", default="aten,fused")
    p.add_argument("--tolerance", type=float, default=2e-5)
    p.add_argument("--json", help="write the comparisons here")
    a = p.parse_args()
    if not os.path.exists(os.path.join(a.data, "train-images-idx3-ubyte.gz")):
        print(f"SKIP: no Fashion-MNIST in {a.data}")
        return 77
    versions = [subprocess.run([exe, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
                for exe in (a.reference, a.candidate)]
    print(f"reference: {versions[0]} on {a.reference_device}\ncandidate: {versions[1]} on {a.candidate_device}")
    work = a.work or tempfile.mkdtemp(prefix="accum-compare-")
    results = []
    for kernels in a.kernels.split(","):
        for model in ("mlp", "cnn"):
            for style in ("pytorch", "accelerator", "trainer"):
                args = ["--mode", style, "--dataset", "fashion-mnist", "--data", a.data, "--model", model,
                        "--batch-size", "32", "--accumulation-steps", "4", "--max-steps", str(STEPS),
                        "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9", "--seed", "0",
                        "--eval-strategy", "no", "--save-strategy", "no", "--threads", "1",
                        "--cpu-kernels", kernels]
                name = f"{model} {style} ({kernels})"
                result = {"model": model, "style": style, "kernels": kernels, "ok": False}
                try:
                    ref = run(a.reference, [*args, "--device", a.reference_device],
                              os.path.join(work, f"ref-{model}-{style}-{kernels}"))
                    cand = run(a.candidate, [*args, "--device", a.candidate_device],
                               os.path.join(work, f"cand-{model}-{style}-{kernels}"))
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"FAIL {name}: {e}")
                    result["error"] = str(e)[-500:]
                    results.append(result)
                    continue
                loss_diff = max(abs(r["loss"] - c["loss"]) for r, c in zip(ref, cand))
                lr_diff = max(abs(r["learning_rate"] - c["learning_rate"]) for r, c in zip(ref, cand))
                result.update(ok=loss_diff <= a.tolerance and lr_diff <= LR_TOLERANCE, loss_difference=loss_diff,
                              lr_difference=lr_diff, last_loss=[ref[-1]["loss"], cand[-1]["loss"]])
                results.append(result)
                print(f"{'ok  ' if result['ok'] else 'FAIL'} {name}: {STEPS} steps each, largest |loss difference| "
                      f"{loss_diff:.3g} (tolerance {a.tolerance:g}), |lr difference| {lr_diff:.3g}; "
                      f"last loss {ref[-1]['loss']:.6f} / {cand[-1]['loss']:.6f}")
    agree = sum(r["ok"] for r in results)
    worst = max((r.get("loss_difference", math.inf) for r in results), default=math.inf)
    print(f"largest loss difference over all runs: {worst:.3g}")
    print(f"pairs that agree: {agree} of {len(results)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"reference": versions[0], "candidate": versions[1], "tolerance": a.tolerance,
                       "largest_loss_difference": worst, "runs": results}, f, indent=1)
    return 0 if agree == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: GPL-3.0-or-later
