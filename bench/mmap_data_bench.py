#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A data file larger than the run's memory: accum-run on a safetensors file of
token ids, mapped, against the same data saved by torch.save, read whole.

Usage: bench/mmap_data_bench.py [--build DIR] [--gib G] [--pt-mib M] [--steps S]
                                [--workdir DIR] [--output FILE]

Writes a safetensors file of G GiB (int32 token ids [N, 128], vocabulary 1,000,
a uint8 attention mask, int64 labels 0/1: sequence classification), a 4 MiB one of the same rows (the
baseline: the runtime, the model, the optimizer and the batches, none of which
depend on the file) and, for the .pt route, the first M MiB of the rows saved by
torch.save. Each is trained by accum-run (--model mlp, micro-batch 32 × 4, S
steps, one thread, no evaluation), and the run's RssAnon and RssFile are read
from /proc/PID/status every 20 ms; the peaks go to FILE (bench/MMAP_DATA.md by
default) with the date and the command. The files are deleted at the end.
Run it with the Python of scripts/setup-libtorch2.sh's environment (numpy, torch):
"$(scripts/setup-libtorch2.sh --python)" bench/mmap_data_bench.py
"""
import argparse
import datetime
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
T = 128          # tokens per sample
VOCAB = 1000
ROWS = 1 << 15   # rows written at a time (16 MiB of ids)


def rows(first, count):
    """Token ids and labels of samples [first, first + count): every id in the first rows."""
    i = np.arange(first, first + count, dtype=np.int64)[:, None]
    j = np.arange(T, dtype=np.int64)[None, :]
    ids = ((i * 131 + j * 17) % VOCAB).astype(np.int32)
    mask = (j < 64 + i % 65).astype(np.uint8)
    labels = ((np.arange(first, first + count) * 131 // 7) % 2).astype(np.int64)
    return ids, mask, labels


def write_safetensors(path, n):
    ids_end, mask_end = n * T * 4, n * T * 5
    header = {"train.input_ids": {"dtype": "I32", "shape": [n, T], "data_offsets": [0, ids_end]},
              "train.attention_mask": {"dtype": "U8", "shape": [n, T], "data_offsets": [ids_end, mask_end]},
              "train.labels": {"dtype": "I64", "shape": [n], "data_offsets": [mask_end, mask_end + n * 8]}}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for part in range(3):
            for first in range(0, n, ROWS):
                f.write(rows(first, min(ROWS, n - first))[part].tobytes())


def write_pt(path, n):
    import torch
    ids, mask, labels = rows(0, n)
    torch.save({"train": {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask),
                          "labels": torch.from_numpy(labels)}}, path)


def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile", "VmHWM"):
                    out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def run(exe, data, steps, workdir):
    out = tempfile.mkdtemp(dir=workdir)
    cmd = [exe, "--dataset", "tensors", "--data", data, "--model", "mlp", "--batch-size", "32",
           "--accumulation-steps", "4", "--max-steps", str(steps), "--eval-strategy", "no", "--save-strategy", "no",
           "--threads", "1", "--quiet", "--output-dir", out]
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = {"RssAnon": 0, "RssFile": 0}
    while p.poll() is None:
        s = status(p.pid)
        for k in peak:
            peak[k] = max(peak[k], s.get(k, 0))
        time.sleep(0.02)
    err = p.stderr.read().decode(errors="replace")
    losses = []
    with open(os.path.join(out, "metrics.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "step":
                losses.append(r["loss"])
    shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        sys.exit(f"accum-run on {data} exited {p.returncode}: {err}")
    return peak, len(losses), time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-libtorch2"))
    ap.add_argument("--gib", type=float, default=2.0)
    ap.add_argument("--pt-mib", type=int, default=512)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--output", default=os.path.join(HERE, "MMAP_DATA.md"))
    args = ap.parse_args()
    exe = os.path.join(args.build, "app", "accum-run")
    work = tempfile.mkdtemp(prefix="mmap-bench-", dir=args.workdir)
    results = []
    try:
        per_row = T * 5 + 8
        cases = [("safetensors", "small.safetensors", (4 << 20) // per_row),
                 ("safetensors", "big.safetensors", int(args.gib * (1 << 30)) // per_row),
                 (".pt (torch.save)", "big.pt", (args.pt_mib << 20) // per_row)]
        for route, name, n in cases:
            path = os.path.join(work, name)
            (write_pt if name.endswith(".pt") else write_safetensors)(path, n)
            size = os.path.getsize(path)
            subprocess.run(["sync"], check=False)
            peak, steps, seconds = run(exe, path, args.steps, work)
            os.remove(path)
            results.append((route, size, n, peak, steps, seconds))
            print(f"{route:18} {size / 2**20:8.0f} MiB  {n:9d} samples  RssAnon {peak['RssAnon'] / 2**20:7.1f} MiB  "
                  f"RssFile {peak['RssFile'] / 2**20:7.1f} MiB  {steps} steps  {seconds:.1f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = "bench/mmap_data_bench.py " + " ".join(sys.argv[1:])
    lines = [f"# A data file larger than the run's memory ({datetime.date.today().isoformat()})", "",
             f"Command: `{command.strip()}`, accum-run of `{os.path.relpath(exe, ROOT)}`; "
             f"--model mlp, micro-batch 32 × 4, {args.steps} steps, one thread, no evaluation.", "",
             "Peaks of the run's /proc/PID/status, read every 20 ms. RssAnon is the process's own memory; "
             "RssFile the file's pages it has mapped, which belong to the page cache and are dropped under "
             "memory pressure.", "",
             "| route | file | samples | peak RssAnon | peak RssFile | steps | wall s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for route, size, n, peak, steps, seconds in results:
        lines.append(f"| {route} | {size / 2**20:.0f} MiB | {n:,} | {peak['RssAnon'] / 2**20:.1f} MiB | "
                     f"{peak['RssFile'] / 2**20:.1f} MiB | {steps} | {seconds:.1f} |")
    small, big = results[0], results[1]
    per_sample = (big[3]["RssAnon"] - small[3]["RssAnon"]) / max(1, big[2] - small[2])
    lines += ["", f"The {big[1] / 2**20:.0f} MiB file's run holds {per_sample:.1f} bytes of anonymous memory a sample "
              "more than the small file's (the bound of docs/own-model.md counts 32); its RssFile is the file's "
              "pages and the libraries'."]
    if len(results) > 2:
        pt = results[2]
        lines += ["", f"The .pt route reads the file whole: {pt[3]['RssAnon'] / 2**20:.0f} MiB of anonymous memory "
                  f"for a {pt[1] / 2**20:.0f} MiB file, {(pt[3]['RssAnon'] - small[3]['RssAnon']) / pt[1]:.1f} times "
                  "its size above the small run (the file's bytes, then the tensors unpickled from them)."]
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("written:", args.output)


if __name__ == "__main__":
    main()
