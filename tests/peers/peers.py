"""Shared pieces of the peers suite: the engine side by side with the real
libraries (torch 2.11, Accelerate, Transformers) on the same experiment.

What lives here:
  - a small Fashion-MNIST subset written as the engine's --data directory
    (IDX files), and the synthetic LM reproduced from the engine's generator;
  - the engine's seeded data order (resources/code/pytorch_loop.py's
    epoch_order) as a torch Sampler, for the plain loop, Accelerate and the
    Trainer alike;
  - nn.Modules with the engine's parameter names, loaded from the weights the
    engine starts from (an accum-run checkpoint);
  - running accum-run and reading what it wrote (metrics.jsonl, its log lines,
    the checkpoint folders);
  - the checks: a record count first (a missing run fails), then no NaN,
    then the largest difference against a tolerance.
"""
import ast
import gzip
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "resources", "code"))
import pytorch_loop  # noqa: E402  the code panel's plain loop: the shuffle and the checkpoint loading

epoch_order = pytorch_loop.epoch_order
FASHION_MNIST = os.environ.get("ACCUM_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
SKIP = 77


def skip(reason):
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


# ------------------------------------------------------------------ data

def _read_idx_gz(path):
    with gzip.open(path) as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def _write_idx_gz(path, array):
    header = struct.pack(">I", 0x0800 | array.ndim) + struct.pack(">" + "I" * array.ndim, *array.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header + np.ascontiguousarray(array, np.uint8).tobytes())


def write_fashion_subset(directory, n_train, n_eval):
    """The first n_train training and n_eval test images of Fashion-MNIST as
    IDX files: the engine reads them with --data DIR, Python from the same files."""
    if not os.path.isdir(FASHION_MNIST):
        skip("Fashion-MNIST is not at %s (Debian's dataset-fashion-mnist, or set ACCUM_FASHION_MNIST_DIR)"
             % FASHION_MNIST)
    os.makedirs(directory, exist_ok=True)
    for split, n in (("train", n_train), ("t10k", n_eval)):
        for kind in ("images-idx3", "labels-idx1"):
            name = "%s-%s-ubyte.gz" % (split, kind)
            _write_idx_gz(os.path.join(directory, name), _read_idx_gz(os.path.join(FASHION_MNIST, name))[:n])
    return directory


def load_fashion(directory):
    """Both splits as the engine makes them: ToTensor() then Normalize(0.2860, 0.3530)."""
    out = {}
    for split, key in (("train", "train"), ("t10k", "eval")):
        images = _read_idx_gz(os.path.join(directory, split + "-images-idx3-ubyte.gz"))
        labels = _read_idx_gz(os.path.join(directory, split + "-labels-idx1-ubyte.gz"))
        x = (torch.from_numpy(images.copy()).float().unsqueeze(1) / 255.0 - 0.2860) / 0.3530
        out[key] = Split(x, torch.from_numpy(labels.astype(np.int64)))
    return out


class Split(torch.utils.data.Dataset):
    """(inputs, labels) rows; items are dicts, as the Trainer's collator wants them."""

    def __init__(self, inputs, labels, attention_mask=None):
        self.inputs, self.labels, self.attention_mask = inputs, labels, attention_mask

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"inputs": self.inputs[i], "labels": self.labels[i]}

    def items(self, i):
        """Label items of sample i (tokens for the LM, 1 for a class label)."""
        return int(self.labels[i].ne(-100).sum()) if self.labels.dim() > 1 else 1


class _Mt64:
    """std::mt19937_64 seeded with one integer (the constructor's seeding)."""

    def __init__(self, seed):
        mt = [seed & pytorch_loop.MASK64]
        for i in range(1, 312):
            mt.append((6364136223846793005 * (mt[-1] ^ (mt[-1] >> 62)) + i) & pytorch_loop.MASK64)
        g = pytorch_loop.Mt19937_64.__new__(pytorch_loop.Mt19937_64)
        g.mt, g.index = mt, 312
        self.g = g

    def __call__(self):
        return self.g()

    def uniform_int(self, lo, hi):
        """libstdc++'s uniform_int_distribution<int64>(lo, hi) on a 64-bit engine:
        Lemire's multiply-and-shift with 128-bit products (GCC 11 and later)."""
        r = hi - lo + 1
        product = self() * r
        low = product & pytorch_loop.MASK64
        if low < r:
            threshold = ((1 << 64) - r) % r
            while low < threshold:
                product = self() * r
                low = product & pytorch_loop.MASK64
        return lo + (product >> 64)

    def canonical(self):
        """generate_canonical<double, 53> on a 64-bit engine: one draw over 2^64."""
        v = float(self()) / 18446744073709551616.0
        return v if v < 1.0 else math.nextafter(1.0, 0.0)


def synthetic_lm(seed, train_size=2000, eval_size=400):
    """engine/src/data/dataset.cpp make_synthetic_lm, draw for draw."""
    vocab, max_len = 64, 64
    chain = _Mt64(seed ^ 0x5EED)
    successors = [[chain.uniform_int(1, vocab - 1) for _ in range(3)] for _ in range(vocab)]

    def make(split_seed, count):
        rng = _Mt64(split_seed)
        ids = torch.zeros(count, max_len, dtype=torch.int64)
        labels = torch.full((count, max_len), -100, dtype=torch.int64)
        for i in range(count):
            length = 8 + int(math.pow(rng.canonical(), 2.0) * (max_len - 8))
            seq = [rng.uniform_int(1, vocab - 1)]
            while len(seq) < length + 1:
                r = rng.uniform_int(0, 9)
                s = successors[seq[-1]]
                seq.append(s[0] if r < 6 else s[1] if r < 8 else s[2] if r < 9 else rng.uniform_int(1, vocab - 1))
            ids[i, :length] = torch.tensor(seq[:length])
            labels[i, :length] = torch.tensor(seq[1:length + 1])
        return Split(ids, labels)

    return {"train": make(seed * 2 + 101, train_size), "eval": make(seed * 2 + 102, eval_size)}


class EngineOrder(torch.utils.data.Sampler):
    """The engine's order of an epoch (the seed and the epoch only): set_epoch is
    called by Accelerate's prepared loader and by the Trainer, as for a DistributedSampler."""

    def __init__(self, size, seed, shuffle=True):
        self.size, self.seed, self.shuffle, self.epoch = size, seed, shuffle, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        return iter(epoch_order(self.size, self.seed, self.epoch, self.shuffle))

    def __len__(self):
        return self.size


def collate(rows):
    return {k: torch.stack([r[k] for r in rows]) for k in rows[0]}


# ------------------------------------------------------------------ models

class Output(dict):
    """What the models return: a dict with loss and logits (the Trainer reads
    outputs["loss"]), also as attributes (outputs.loss)."""
    __getattr__ = dict.__getitem__


def _loss(logits, labels, num_items_in_batch):
    rows, targets = logits.reshape(-1, logits.size(-1)), labels.reshape(-1)
    if num_items_in_batch is None:
        return F.cross_entropy(rows, targets, ignore_index=-100)
    return F.cross_entropy(rows, targets, ignore_index=-100, reduction="sum") / num_items_in_batch


class Mlp(nn.Module):
    """engine/src/models/mlp.cpp: 784-256-128-10 on images; with tokens an
    embedding of 64 per token first (the LM is a bigram model)."""

    def __init__(self, in_features=784, classes=10, vocab=0):
        super().__init__()
        if vocab:
            self.embedding = nn.Embedding(vocab, 64)
            in_features = 64
        self.vocab = vocab
        self.body = nn.Sequential(nn.Linear(in_features, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                  nn.Linear(128, classes))

    def forward(self, inputs, labels=None, num_items_in_batch=None, **kwargs):
        x = self.embedding(inputs) if self.vocab else inputs.flatten(1)
        logits = self.body(x)
        out = Output(logits=logits)
        if labels is not None:
            out["loss"] = _loss(logits, labels, num_items_in_batch)
        return out


class Cnn(nn.Module):
    """engine/src/models/cnn.cpp: conv32-conv64-fc128-10, 3 × 3 convolutions padded 1."""

    def __init__(self, classes=10, side=28):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Linear(64 * (side // 4) ** 2, 128), nn.ReLU(), nn.Linear(128, classes))

    def forward(self, inputs, labels=None, num_items_in_batch=None, **kwargs):
        logits = self.head(self.features(inputs).flatten(1))
        out = Output(logits=logits)
        if labels is not None:
            out["loss"] = _loss(logits, labels, num_items_in_batch)
        return out


def make_model(kind, weights, vocab=0):
    model = Cnn() if kind == "cnn" else Mlp(classes=vocab or 10, vocab=vocab)
    load_weights(model, weights)
    return model


def load_weights(model, checkpoint):
    """The parameters of an accum-run checkpoint (model.safetensors, or an earlier engine's
    model.pt), by name; every parameter must be there with its shape."""
    saved = pytorch_loop.checkpoint_weights(checkpoint)
    mine = dict(model.named_parameters())
    if sorted(saved) != sorted(mine):
        raise AssertionError("parameter names differ: engine %s, Python %s" % (sorted(saved), sorted(mine)))
    with torch.no_grad():
        for name, p in mine.items():
            if saved[name].shape != p.shape:
                raise AssertionError("%s: engine %s, Python %s" % (name, tuple(saved[name].shape), tuple(p.shape)))
            p.copy_(saved[name])


def classification_metrics(predictions, labels, classes):
    """accuracy and F1 as the engine's evaluation reports them, written the
    scikit-learn way: binary F1 of class 1, else the macro mean over the classes
    present in the labels or the predictions."""
    keep = labels != -100
    p, t = predictions[keep], labels[keep]
    accuracy = float((p == t).mean()) if t.size else 0.0

    def f1(k):
        tp = float(((p == k) & (t == k)).sum())
        denom = float((p == k).sum() + (t == k).sum())
        return 2 * tp / denom if denom else 0.0

    if classes == 2:
        return {"accuracy": accuracy, "f1": f1(1)}
    present = sorted(set(np.unique(p).tolist()) | set(np.unique(t).tolist()))
    return {"accuracy": accuracy, "f1": sum(f1(k) for k in present) / len(present) if present else 0.0}


def compute_metrics(eval_pred):
    """The Trainer's compute_metrics: accuracy and F1 from the logits."""
    logits, labels = eval_pred.predictions, eval_pred.label_ids
    if isinstance(logits, tuple):
        logits = logits[0]
    return classification_metrics(logits.argmax(-1), labels, logits.shape[-1])


@torch.no_grad()
def evaluate(model, split, batch_size):
    """eval_loss over every label item, accuracy and F1 (the engine's evaluate_model)."""
    was = model.training
    model.eval()
    loss_sum, items, preds, labels = 0.0, 0, [], []
    for b in range(0, len(split), batch_size):
        x, y = split.inputs[b:b + batch_size], split.labels[b:b + batch_size]
        out = model(x)
        loss_sum += F.cross_entropy(out.logits.reshape(-1, out.logits.size(-1)), y.reshape(-1),
                                    ignore_index=-100, reduction="sum").item()
        items += int(y.ne(-100).sum())
        preds.append(out.logits.argmax(-1).numpy())
        labels.append(y.numpy())
    model.train(was)
    m = classification_metrics(np.concatenate(preds), np.concatenate(labels), out.logits.size(-1))
    return {"eval_loss": loss_sum / items, "eval_accuracy": m["accuracy"], "eval_f1": m["f1"]}


@torch.no_grad()
def evaluate_per_batch_mean(model, split, batch_size):
    """The Trainer's eval_loss: each eval batch's loss (the model's token mean)
    weighted by the batch's number of samples (evaluation_loop repeats the loss
    batch_size times), then the mean."""
    was = model.training
    model.eval()
    total = 0.0
    for b in range(0, len(split), batch_size):
        x, y = split.inputs[b:b + batch_size], split.labels[b:b + batch_size]
        total += model(x, labels=y).loss.item() * len(y)
    model.train(was)
    return total / len(split)


# ------------------------------------------------------------------ the engine

class EngineRun:
    def __init__(self, out_dir, stdout):
        self.out_dir = out_dir
        self.records = []
        with open(os.path.join(out_dir, "metrics.jsonl")) as f:
            for line in f:
                if line.strip():
                    self.records.append(json.loads(line))
        self.steps = [r for r in self.records if r["type"] == "step"]
        self.evals = [r for r in self.records if r["type"] == "eval"]
        self.summary = next((r for r in self.records if r["type"] == "summary"), None)
        # The Trainer's dict lines, as printed.
        # (With several processes rank 0 prints them, its lines prefixed "[rank 0] ".)
        lines = [l[len("[rank 0] "):] if l.startswith("[rank 0] ") else l for l in stdout.splitlines()]
        self.dict_lines = [ast.literal_eval(l) for l in lines if l.startswith("{'")]
        self.stdout = stdout

    def checkpoints(self):
        return checkpoint_names(self.out_dir)


def checkpoint_names(directory):
    names = [n for n in os.listdir(directory) if n.startswith("checkpoint-")]
    return sorted(names, key=lambda n: int(n.split("-")[1]))


def engine_program():
    program = os.environ.get("ACCUM_RUN")
    if not program or not os.access(program, os.X_OK):
        raise SystemExit("peers: set ACCUM_RUN to the accum-run to test (CTest does)")
    return program


def run_engine(out_dir, options, timeout=240, env=None):
    """accum-run with these options (a dict: --key value, True for a flag) into out_dir."""
    shutil.rmtree(out_dir, ignore_errors=True)
    argv = [engine_program()]
    for key, value in options.items():
        if value is True:
            argv.append("--" + key)
        elif value is not False and value is not None:
            argv += ["--" + key, str(value)]
    argv += ["--output-dir", out_dir, "--device", "cpu"]
    if "threads" not in options:
        argv += ["--threads", "1"]
    # In a session of its own, so that a run past its time ends with every rank it
    # launched (--nproc-per-node), not the launcher alone.
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError("accum-run ran past %d s: %s" % (timeout, " ".join(argv)))
    if p.returncode != 0:
        raise AssertionError("accum-run exited %d:\n%s\n%s" % (p.returncode, " ".join(argv), out[-3000:]))
    return EngineRun(out_dir, out)


def initial_weights(work, options):
    """The weights the engine starts from with these options' seed and model: a
    one-step run whose only update has learning rate 0 (warmup of one step), so
    that checkpoint-1 holds the initial parameters unchanged."""
    keep = {k: options[k] for k in ("model", "dataset", "data", "seed", "batch-size") if k in options}
    out = os.path.join(work, "initial")
    run_engine(out, dict(keep, **{"max-steps": 1, "warmup-steps": 1, "scheduler": "constant", "optimizer": "sgd",
                                   "accumulation-steps": 1, "save-strategy": "steps", "save-steps": 1,
                                   "eval-strategy": "no", "quiet": True}))
    run = EngineRun(out, "")
    expect_count("initial-weights run steps", run.steps, 1)
    if run.steps[0]["learning_rate"] != 0.0:
        raise AssertionError("the initial-weights run stepped with learning rate %r" % run.steps[0]["learning_rate"])
    return os.path.join(out, "checkpoint-1")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ checks

class Report:
    """Each comparison: its name, the largest difference and its tolerance. A
    failure is recorded and the run goes on, so one run shows every difference."""

    def __init__(self, case):
        self.case, self.rows, self.failures = case, [], []

    def fail(self, what):
        self.failures.append(what)
        print("FAIL " + what, flush=True)

    def count(self, what, got, expected):
        if len(got) != expected:
            self.fail("%s: %d records, expected %d" % (what, len(got), expected))
            return False
        return True

    def close(self, what, a, b, tol, expected, relative=False):
        """a and b: sequences of numbers, each of `expected` values, none NaN."""
        if not (self.count(what + " (engine)", a, expected) & self.count(what + " (peer)", b, expected)):
            return None
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if np.isnan(a).any() or np.isnan(b).any():
            self.fail("%s: NaN (engine %s, peer %s)" % (what, a.tolist(), b.tolist()))
            return None
        d = np.abs(a - b)
        if relative:
            d = d / np.maximum(np.abs(b), 1e-12)
        worst = float(d.max()) if d.size else 0.0
        ok = worst <= tol
        self.rows.append({"what": what, "max_diff": worst, "tol": tol, "n": expected, "relative": relative})
        print("%s %s: max |diff|%s %.3g (tol %.0e, %d values)" % ("ok  " if ok else "FAIL", what,
              " rel" if relative else "", worst, tol, expected), flush=True)
        if not ok:
            i = int(d.argmax())
            self.failures.append("%s: %.3g > %.0e at %d (engine %r, peer %r)" % (what, worst, tol, i, a[i], b[i]))
        return worst

    def note(self, text):
        self.rows.append({"note": text})
        print("note " + text, flush=True)

    def equal(self, what, a, b):
        ok = a == b
        self.rows.append({"what": what, "equal": ok})
        print("%s %s: %s" % ("ok  " if ok else "FAIL", what, a if ok else "engine %r, peer %r" % (a, b)), flush=True)
        if not ok:
            self.failures.append("%s: engine %r, peer %r" % (what, a, b))

    def finish(self, work):
        with open(os.path.join(work, "report.json"), "w") as f:
            json.dump({"case": self.case, "rows": self.rows, "failures": self.failures}, f, indent=1)
        if self.failures:
            print("\n%d failure(s) in %s:\n  " % (len(self.failures), self.case) + "\n  ".join(self.failures))
            sys.exit(1)
        print("%s: all %d comparisons passed" % (self.case, len(self.rows)))


def expect_count(what, records, expected):
    if len(records) != expected:
        raise AssertionError("%s: %d records, expected %d" % (what, len(records), expected))
# SPDX-License-Identifier: GPL-3.0-or-later
