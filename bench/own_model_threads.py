#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A user's module at the defaults: accum-run (no --threads) against eager PyTorch at
its own defaults, on the packaged pretrained all-MiniLM-L6-v2 as a two-class classifier
(examples/pretrained_classifier.py), micro-batch 16 x 4 with AdamW, fp32 and bf16.

    PY=$(scripts/setup-libtorch2.sh --python)
    $PY bench/own_model_threads.py build-libtorch2/app/accum-run [--rounds 3] [--steps 6]
        [--write bench/OWN_MODEL_THREADS.md]

Each round runs the engine and eager PyTorch one after the other (their order
alternating), each in its own process at its own default thread count; a rate is the
samples of optimizer steps 2..N over their time (the first step, with TorchScript's
profiling runs and the first allocations, left out, on both sides). Prints one line per
run and the medians; --write appends a dated table. Eager PyTorch: the same
BertForSequenceClassification (dropout off, eager attention, as the traced module),
model.train(), AdamW, the loss divided by K, under torch.autocast("cpu", bf16) for bf16.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

BATCH, K, LR = 16, 4, 1e-4


def engine_rate(accum_run, model, data, steps, precision, work):
    out = os.path.join(work, "engine-%s-%d" % (precision, time.monotonic_ns()))
    cmd = [accum_run, "--model", model, "--dataset", "tensors", "--data", data, "--mode", "pytorch",
           "--batch-size", str(BATCH), "--accumulation-steps", str(K), "--optimizer", "adamw", "--lr", str(LR),
           "--max-steps", str(steps), "--eval-strategy", "no", "--save-strategy", "no", "--no-shuffle",
           "--output-dir", out]
    if precision == "bf16":
        cmd += ["--mixed-precision", "bf16"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("engine run failed (%d): %s" % (run.returncode, run.stderr[-2000:]))
    steps_seen = [r for r in map(json.loads, open(os.path.join(out, "metrics.jsonl"))) if r.get("type") == "step"]
    if len(steps_seen) < 3:
        sys.exit("engine run wrote %d step records, need 3 or more" % len(steps_seen))
    first, last = steps_seen[0], steps_seen[-1]
    threads = next((line.strip() for line in run.stdout.splitlines() + run.stderr.splitlines()
                    if "threads:" in line), "")
    return (last["samples_seen"] - first["samples_seen"]) / (last["elapsed_s"] - first["elapsed_s"]), threads


EAGER = r'''
import json, sys, time, torch
sys.path.insert(0, sys.argv[1])
import pretrained_classifier as pc
steps, precision, data_path = int(sys.argv[2]), sys.argv[3], sys.argv[4]
data = torch.load(data_path)["train"]
model = pc.load_classifier(pc.model_dir(), "eager", torchscript=False)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=%(lr)r)
B, K = %(batch)d, %(k)d
n = data["input_ids"].shape[0]
times, samples, i = [], [], 0
for step in range(steps):
    for _ in range(K):
        rows = slice(i %% n, i %% n + B) if i %% n + B <= n else slice(0, B)
        i = rows.start + B
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            out = model(input_ids=data["input_ids"][rows], attention_mask=data["attention_mask"][rows],
                        token_type_ids=data["token_type_ids"][rows], labels=data["label"][rows])
        (out[0] / K).backward()  # return_dict=False: (loss, logits)
    opt.step(); opt.zero_grad()
    times.append(time.perf_counter()); samples.append(B * K)
rate = sum(samples[1:]) / (times[-1] - times[0])
print(json.dumps({"rate": rate, "threads": torch.get_num_threads()}))
''' % {"lr": LR, "batch": BATCH, "k": K}


def eager_rate(python, data, steps, precision):
    run = subprocess.run([python, "-c", EAGER, os.path.join(ROOT, "examples"), str(steps), precision, data],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("eager run failed (%d): %s" % (run.returncode, run.stderr[-2000:]))
    result = json.loads(run.stdout.strip().splitlines()[-1])
    return result["rate"], "torch.get_num_threads() = %d" % result["threads"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("accum_run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6, help="optimizer steps per run (rate over 2..N)")
    parser.add_argument("--precision", nargs="+", default=["fp32", "bf16"])
    parser.add_argument("--write", help="append a dated table to this markdown file")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="own-model-threads-")
    model, data = os.path.join(work, "minilm.pt"), os.path.join(work, "minilm_data.pt")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "pretrained_classifier.py"), model, data,
                    "--attention", "eager"], check=True)
    rows = []
    for precision in args.precision:
        engine, eager, notes = [], [], {}
        for r in range(args.rounds):
            order = ("engine", "eager") if r % 2 == 0 else ("eager", "engine")
            for side in order:
                load = os.getloadavg()[0]
                if side == "engine":
                    rate, note = engine_rate(args.accum_run, model, data, args.steps, precision, work)
                    engine.append(rate)
                else:
                    rate, note = eager_rate(sys.executable, data, args.steps, precision)
                    eager.append(rate)
                notes[side] = note
                print("%s %s round %d: %.1f samples/s (load %.2f; %s)" % (precision, side, r + 1, rate, load, note),
                      flush=True)
        row = (precision, statistics.median(engine), statistics.median(eager), min(engine), max(engine), min(eager),
               max(eager), notes)
        rows.append(row)
        print("%s: engine %.1f, eager %.1f samples/s (medians): %.2f x" % (precision, row[1], row[2], row[1] / row[2]))
    if args.write:
        with open(args.write, "a") as f:
            f.write("\n## %s, %s, %d cores, load %.2f at the end\n\n" % (
                datetime.date.today().isoformat(), platform.processor() or platform.machine(), os.cpu_count(),
                os.getloadavg()[0]))
            f.write("`%s`, %d rounds of %d optimizer steps, alternating\n\n" % (
                " ".join(["bench/own_model_threads.py"] + sys.argv[1:]), args.rounds, args.steps))
            f.write("| precision | engine, default threads | eager PyTorch, default threads | engine / eager |\n")
            f.write("|---|---|---|---|\n")
            for precision, eng, eag, elo, ehi, glo, ghi, notes in rows:
                f.write("| %s | %.1f samples/s (%.1f–%.1f) | %.1f samples/s (%.1f–%.1f) | %.2f × |\n" % (
                    precision, eng, elo, ehi, eag, glo, ghi, eng / eag))
            f.write("\nThreads: engine `%s`; eager `%s`.\n" % (rows[0][7].get("engine", ""), rows[0][7].get("eager", "")))


if __name__ == "__main__":
    main()
