#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""One training step (forward and backward) of the pretrained all-MiniLM-L6-v2
classifier (examples/pretrained_classifier.py, eager attention, dropout off) at
16 x 128, four ways, at one thread count:

  pt2          the AOTInductor package examples/accum_pt2.py writes (the same
               compiled .so accum-run calls from C++), one call: loss and gradients
  torchscript  the module traced with torch.jit.trace (what --model FILE.pt runs),
               forward and loss.backward()
  eager        the Transformers model, forward and loss.backward()
  compile      torch.compile(model), forward and loss.backward()

    PY=$(scripts/setup-libtorch2.sh --python)
    $PY bench/pt2_speed.py [--threads 2] [--calls 4] [--warmup 2] [--dtype fp32|bf16]
                           [--option KEY=VALUE ...] [--only pt2,eager]

bf16 is autocast (CPU, bfloat16) for eager, TorchScript and torch.compile, and a
package compiled under the same autocast. --option passes Inductor options to the
package's compile (max_autotune=True, ...). Prints each run's median seconds per
call over --calls calls after --warmup, and the package's compile time; packages
are cached in ~/.cache/accum-studio/pt2 by a hash of their inputs.
"""
import argparse
import hashlib
import os
import statistics
import sys
import time

sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_LAZY)  # the package's .so takes torch's symbols from the process
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import accum_pt2  # noqa: E402
import pretrained_classifier as pc  # noqa: E402


def report(results, name, sec, args):
    results[name] = sec
    print("%-12s %s %d threads: %.3f s per step" % (name, args.dtype, args.threads, sec), flush=True)


def timed(step, calls, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--calls", type=int, default=4)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--option", action="append", default=[], help="Inductor option KEY=VALUE for the package")
    p.add_argument("--only", default="pt2,torchscript,eager,compile")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    import transformers
    directory = pc.model_dir()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    data = pc.make_data(tokenizer, train=args.batch, validation=2, test=2)["train"]
    batch = {k: data[k][: args.batch] for k in ("input_ids", "attention_mask", "token_type_ids")}
    batch["labels"] = data["label"][: args.batch]
    bf16 = args.dtype == "bf16"
    autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)  # noqa: E731
    only = args.only.split(",")
    options = {}
    for o in args.option:
        k, v = o.split("=", 1)
        options[k] = {"True": True, "False": False}.get(v, int(v) if v.isdigit() else v)
    results = {}

    if "pt2" in only:
        model = pc.load_classifier(directory, torchscript=False)
        key = hashlib.sha256(open(os.path.join(ROOT, "examples", "accum_pt2.py"), "rb").read() +
                             repr((args.dtype, sorted(options.items()), torch.__version__, "minilm")).encode())
        cache = os.path.join(os.path.expanduser("~"), ".cache", "accum-studio", "pt2")
        os.makedirs(cache, exist_ok=True)
        path = os.path.join(cache, "bench-" + key.hexdigest()[:20] + ".pt2")
        if not os.path.exists(path):
            t = time.perf_counter()
            example = {k: v[:2] for k, v in batch.items()}
            accum_pt2.export_training_package(model, example, path + ".tmp.pt2", inductor_configs=options,
                                              autocast=torch.bfloat16 if bf16 else None)
            os.replace(path + ".tmp.pt2", path)
            print("pt2 compile (capture, export, AOTInductor, both graphs): %.1f s" % (time.perf_counter() - t),
                  flush=True)
        from torch._inductor.package import load_package
        train = load_package(path, "train")
        params = [p.detach() for p in model.parameters()]
        buffers = [b.detach() for b in model.buffers()]
        seed = torch.tensor(1)
        inputs = [batch[k] for k in ("input_ids", "attention_mask", "token_type_ids", "labels")]
        report(results, "pt2", timed(lambda: train(*params, *buffers, *inputs, seed), args.calls, args.warmup), args)
        del train

    def fwd_bwd(module, as_tuple):
        def step():
            with autocast():
                out = module(**batch)
            loss = out[0] if isinstance(out, (tuple, list)) else out.loss
            loss.backward()
            module.zero_grad(set_to_none=True)
        return step

    if "torchscript" in only:
        traced = pc.trace(pc.load_classifier(directory), dict(data))
        traced.train()
        report(results, "torchscript", timed(fwd_bwd(traced, True), args.calls, args.warmup), args)
    if "eager" in only:
        model = pc.load_classifier(directory, torchscript=False)
        model.train()
        report(results, "eager", timed(fwd_bwd(model, False), args.calls, args.warmup), args)
    if "compile" in only:
        model = pc.load_classifier(directory, torchscript=False)
        model.train()
        compiled = torch.compile(model)
        t = time.perf_counter()
        fwd_bwd(compiled, False)()
        print("torch.compile first call (compile): %.1f s" % (time.perf_counter() - t), flush=True)
        report(results, "compile", timed(fwd_bwd(compiled, False), args.calls, args.warmup), args)
    ref = results.get("torchscript")
    if ref:
        for name, sec in results.items():
            print("%-12s %.2f x TorchScript's speed" % (name, ref / sec), flush=True)


if __name__ == "__main__":
    main()
