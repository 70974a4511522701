#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""One training step (forward and backward, dropout off) of a model, several
ways, at one thread count, the runs alternated in one process (A, B, C, A, B,
C, ...) so that a machine shared with other work slows each run alike:

  pt2          the AOTInductor package examples/accum_pt2.py writes (the same
               compiled .so accum-run calls from C++), one call: loss and gradients
  pt2:NAME     the same package compiled with the Inductor options of --variant NAME
  torchscript  the module traced with torch.jit.trace (what --model FILE.pt runs),
               forward and loss.backward()
  eager        the nn.Module, forward and loss.backward()
  compile      torch.compile(module), forward and loss.backward()

Models (--model):
  minilm       the pretrained all-MiniLM-L6-v2 as a two-class classifier
               (examples/pretrained_classifier.py, eager attention), 16 x 128
  transformer  the engine's built-in --model transformer (d 64, 2 layers, 4 heads,
               feed-forward 128, masked mean pool, 2 classes) as its Python twin
               in bench/eager_reference.py, on its synthetic pairs, 64 x 48

    PY=$(scripts/setup-libtorch2.sh --python)
    $PY bench/pt2_speed.py --model minilm --threads 1 --rounds 3 --dtype fp32 \\
        [--runs pt2,torchscript,eager,compile] [--variant NAME:KEY=VALUE[,KEY=VALUE...]]

bf16 is autocast (CPU, bfloat16) for eager, TorchScript and torch.compile, and a
package compiled under the same autocast. A --variant's options go to Inductor
(max_autotune=True, cpp.simdlen=256, ...); `decomp=keep:OP+OP` (layer_norm,
gelu, softmax, ...) compiles with Inductor's decomposition table less those ops'
backward decompositions. Each package is compiled in a child process (a variant's is stopped
after --compile-limit seconds); packages are cached in ~/.cache/accum-studio/pt2
by a hash of their inputs. A package whose loss differs from eager's on the
timed batch is reported WRONG and not timed. Every run is warmed up --warmup times, then each
round times one sample of each run (a sample is --inner steps); prints the
median and the range per step and each run's speed against TorchScript (the
median over rounds of TorchScript's time / the run's, same round).
"""
import argparse
import contextlib
import ctypes
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

# The package's .so takes torch's symbols (SLEEF's among them) from the process: LibTorch's
# library is made global after the import. Not sys.setdlopenflags(RTLD_GLOBAL), which would
# make every later extension global too, torch.compile's kernel modules among them: their
# same-named entry points then bind to the first module's (wrong kernels, out-of-bounds
# indices, crashes).
ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"),
            mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD)
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import accum_pt2  # noqa: E402

BATCH = {"minilm": 16, "transformer": 64}
INNER = {"minilm": 1, "transformer": 20}


def setup(name, batch_size):
    """(make_module(torchscript) -> nn.Module, batch dict, loss_fn or None, keys the module takes)."""
    if name == "minilm":
        import pretrained_classifier as pc
        import transformers
        directory = pc.model_dir()
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
        data = pc.make_data(tokenizer, train=batch_size, validation=2, test=2)["train"]
        batch = {k: data[k][:batch_size] for k in ("input_ids", "attention_mask", "token_type_ids")}
        batch["labels"] = data["label"][:batch_size]
        return (lambda torchscript=False: pc.load_classifier(directory, torchscript=torchscript)), batch, None
    import eager_reference as er
    ids, labels, mask = er.synthetic_pairs()
    batch = {"input_ids": ids[:batch_size], "attention_mask": mask[:batch_size], "labels": labels[:batch_size]}

    def make(torchscript=False):
        torch.manual_seed(0)
        return er.Transformer()
    return make, batch, F.cross_entropy


def loss_of(module, batch, loss_fn):
    if loss_fn is None:
        out = module(**batch)
        return out[0] if isinstance(out, (tuple, list)) else out.loss
    return loss_fn(module(batch["input_ids"], batch["attention_mask"]), batch["labels"])


def parse_options(text):
    options = {}
    for item in filter(None, text.split(",")):
        k, v = item.split("=", 1)
        options[k] = {"True": True, "False": False}.get(v, int(v) if v.lstrip("-").isdigit() else v)
    return options


@contextlib.contextmanager
def kept_decompositions(ops):
    """Inductor's decomposition table without the backward decompositions of `ops`
    (layer_norm, gelu, softmax, ...): those stay ATen's kernels in the compiled graph."""
    from torch._inductor import decomposition
    table = decomposition.decompositions  # select_decomp_table() builds its tables from this one
    drop = [op for op in table if any(op.name().split("::")[-1].split(".")[0] in (
        "native_%s_backward" % n, "_%s_backward_data" % n, "%s_backward" % n, "_%s_backward" % n) for n in ops)]
    saved = {op: table.pop(op) for op in drop}
    decomposition.fast_random_decomps.cache_clear()
    print("kept as ATen's kernels: %s" % ", ".join(sorted(op.name() for op in saved)), flush=True)
    try:
        yield
    finally:
        table.update(saved)
        decomposition.fast_random_decomps.cache_clear()


def compile_package(args, options, path):
    """The child process: compiles the package at `path` and prints its compile time."""
    make, batch, loss_fn = setup(args.model, args.batch)
    model = make()
    example = {k: v[:2] for k, v in batch.items()}
    decomp = options.pop("decomp", "")
    keep = decomp.split(":", 1)[1].split("+") if decomp.startswith("keep:") else []
    t = time.perf_counter()
    with kept_decompositions(keep) if keep else contextlib.nullcontext():
        accum_pt2.export_training_package(model, example, path + ".tmp.pt2", loss_fn=loss_fn, inductor_configs=options,
                                          dropout=False, autocast=torch.bfloat16 if args.dtype == "bf16" else None)
    os.replace(path + ".tmp.pt2", path)
    print(json.dumps({"compile_s": time.perf_counter() - t}), flush=True)


def package(args, name, options):
    """The cached package for `options`, compiled in a child process (None when it failed or ran
    past --compile-limit), and its compile time or the reason."""
    tag = "minilm" if args.model == "minilm" else "transformer-%d" % args.batch
    with open(os.path.join(ROOT, "examples", "accum_pt2.py"), "rb") as f:
        key = hashlib.sha256(f.read() + repr((args.dtype, sorted(options.items()), torch.__version__, tag)).encode())
    cache = os.path.join(os.path.expanduser("~"), ".cache", "accum-studio", "pt2")
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, "bench-" + key.hexdigest()[:20] + ".pt2")
    times = path + ".compile.json"
    if os.path.exists(path):
        with open(times) if os.path.exists(times) else contextlib.nullcontext() as f:
            note = "compiled before in %.0f s" % json.load(f)["compile_s"] if f else "compiled before"
        return path, note
    cmd = [sys.executable, os.path.abspath(__file__), "--model", args.model, "--dtype", args.dtype, "--batch",
           str(args.batch), "--compile-package", path, "--options", json.dumps(options)]
    print("compiling %s (%s) ..." % (name, options or "defaults"), flush=True)
    t = time.perf_counter()
    limit = args.compile_limit if options else 1200  # the default package is the figure: it may take longer
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None, "stopped: no package after %d s of compiling" % limit
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        return None, "compile failed: " + " | ".join(tail)[-400:]
    seconds = json.loads(out.stdout.strip().splitlines()[-1])["compile_s"]
    with open(times, "w") as f:
        json.dump({"compile_s": seconds, "options": options}, f)
    return path, "compiled in %.0f s (process %.0f s)" % (seconds, time.perf_counter() - t)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["minilm", "transformer"], default="minilm")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--inner", type=int, help="steps per timed sample (default 1 for minilm, 20 for transformer)")
    p.add_argument("--batch", type=int, help="micro-batch (default 16 for minilm, 64 for transformer)")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--runs", default="pt2,torchscript,eager,compile")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:K=V,...",
                   help="one more package compiled with these Inductor options, timed as pt2:NAME")
    p.add_argument("--compile-limit", type=int, default=360, help="seconds before a --variant's compile is stopped (the default package's: 1200)")
    p.add_argument("--compile-package", help=argparse.SUPPRESS)
    p.add_argument("--options", default="{}", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.batch = args.batch or BATCH[args.model]
    args.inner = args.inner or INNER[args.model]
    torch.set_num_threads(args.threads)
    if args.compile_package:
        return compile_package(args, json.loads(args.options), args.compile_package)

    make, batch, loss_fn = setup(args.model, args.batch)
    bf16 = args.dtype == "bf16"
    autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)  # noqa: E731
    runs = args.runs.split(",")
    packages = [("pt2", {})] if "pt2" in runs else []
    packages += [("pt2:" + v.split(":", 1)[0], parse_options(v.split(":", 1)[1])) for v in args.variant]
    steps, notes = {}, {}

    def fwd_bwd(module):
        def step():
            with autocast():
                loss = loss_of(module, batch, loss_fn)
            loss.backward()
            module.zero_grad(set_to_none=True)
        return step

    from torch._inductor.package import load_package
    model = make()
    params = [t.detach() for t in model.parameters()]
    buffers = [t.detach() for t in model.buffers()]
    inputs = [batch[k] for k in accum_pt2.BATCH_KEYS if k in batch]
    seed = torch.tensor(1)
    with torch.no_grad(), autocast():
        expected = loss_of(model, batch, loss_fn).item()  # every package's loss is checked against it
    for name, options in packages:
        path, notes[name] = package(args, name, options)
        if path:
            train = load_package(path, "train")
            loss = train(*params, *buffers, *inputs, seed)[0].item()
            if not abs(loss - expected) <= (2e-2 if bf16 else 1e-4) * max(1.0, abs(expected)):
                notes[name] += "; WRONG: loss %.6f at batch %d against eager's %.6f, not timed" % (
                    loss, args.batch, expected)
            else:
                steps[name] = (lambda train: lambda: train(*params, *buffers, *inputs, seed))(train)
        print("%-14s %s" % (name, notes[name]), flush=True)
    if "torchscript" in runs:
        module = make(torchscript=True)
        module.eval()
        if args.model == "minilm":
            example = {k: v[:2] for k, v in batch.items()}
            traced = torch.jit.trace(module, example_kwarg_inputs=example, strict=True)
        else:
            traced = torch.jit.trace(module, (batch["input_ids"][:2], batch["attention_mask"][:2]))
        traced.train()
        steps["torchscript"] = fwd_bwd(traced)
    if "eager" in runs:
        module = make()
        module.train()
        steps["eager"] = fwd_bwd(module)
    for name in (r for r in runs if r.startswith("compile")):
        kwargs = {"dynamic": False} if name == "compile-static" else {}
        module = make()
        module.train()
        # The same vector ISA as the packages' (torch.compile's own probe refuses every ISA here).
        torch._inductor.config.cpp.vec_isa_ok = accum_pt2._vector_isa_options().get("cpp.vec_isa_ok", None)
        step = fwd_bwd(torch.compile(module, **kwargs))
        t = time.perf_counter()
        try:
            step()
            notes[name] = "first call (compile) %.0f s" % (time.perf_counter() - t)
            steps[name] = step
        except Exception as e:  # noqa: BLE001 (the failure is a figure of the note)
            notes[name] = "failed: %s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:300])
        print("%-14s %s" % (name, notes[name]), flush=True)

    for name, step in steps.items():
        for _ in range(args.warmup):
            step()
    samples = {name: [] for name in steps}
    for r in range(args.rounds):
        for name, step in steps.items():
            t = time.perf_counter()
            for _ in range(args.inner):
                step()
            samples[name].append((time.perf_counter() - t) / args.inner)
        print("round %d: %s" % (r + 1, "  ".join("%s %.4f" % (n, s[-1]) for n, s in samples.items())), flush=True)

    ref = samples.get("torchscript")
    print("\n%s, %s, %d thread(s), batch %d, %d rounds of %d step(s) after %d warm-up(s):" % (
        args.model, args.dtype, args.threads, args.batch, args.rounds, args.inner, args.warmup))
    print("| run | s per step, median | range | against TorchScript (median, range) | note |")
    print("|---|---|---|---|---|")
    for name, s in samples.items():
        ratio = ""
        if ref:
            ratios = [a / b for a, b in zip(ref, s)]
            ratio = "%.2f × (%.2f–%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))
        print("| %s | %.4f | %.4f–%.4f | %s | %s |" % (name, statistics.median(s), min(s), max(s), ratio,
                                                      notes.get(name, "")))
    for name, note in notes.items():
        if name not in samples:
            print("| %s | — | — | — | %s |" % (name, note))


if __name__ == "__main__":
    main()
