#!/usr/bin/python3
"""Where a training run's CPU time goes: a sampling profile (Linux perf) of one
row of bench/run_bench.py, for the engine (either build) or the PyTorch 2.11
references, its samples sorted into what they were doing:

  oneDNN generated   the kernels oneDNN writes at run time (its bf16 matrix
                     products, its convolutions)
  GEMM               the BLAS matrix products (OpenBLAS, MKL, oneDNN's GEMM)
  convolution        ATen's convolution and its im2col
  engine kernels     the engine's own fused CPU kernels (accum::dense, ::kernels)
  elementwise/copy   ATen's vectorised loops: casts, adds, activations, reductions
  memory allocation  malloc / free and the kernel's page faults behind them
  dispatch/autograd  operator dispatch, autograd's graph and engine, tensor
                     bookkeeping (c10, at:: outside kernels, torch::autograd)
  Python             the interpreter (references only)
  other

Samples of data loading (gzip, the IDX reader), before the clock, are left out;
the rest of the process's start-up is not, so profile long runs (the default: three
times the benchmark's steps). Debian's LibTorch 1.13 has no symbols: a profile of
engine-1.13 says so and gives no rate.
With the row's FLOPs per sample (bench/run_bench.py) and the run's measured
samples/s it also gives the rate of the arithmetic: the training FLOPs per
second of the time in the four arithmetic categories (oneDNN generated code,
GEMM, convolution, the engine's kernels), against the one-core peak of
bench/peak_gemm.py.

Usage: bench/where_time_goes.py IMPL MODEL BATCH K PRECISION THREADS
  IMPL: engine-1.13 | engine-2.11 | eager | compile
  e.g.  bench/where_time_goes.py engine-2.11 mlp 16 16 bf16 1

Needs perf (Debian: linux-perf) and the permission to use it (root, or
kernel.perf_event_paranoid ≤ 1).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import FLOPS, STEPS, engine_options  # noqa: E402
from torch_reference import WARMUP_STEPS, rate_after_warmup, step_records, torch2_python  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CATEGORIES = [
    # (category, test on (dso, symbol)), first match wins
    ("data loading (not timed)", lambda d, s: "libz" in d or "read_maybe_gzip" in s or "idx" in s.lower()
     or "inflate" in s or "load_fashion_mnist" in s),
    ("oneDNN generated code", lambda d, s: d.startswith("[JIT]")),
    ("engine kernels", lambda d, s: d == "accum-run" and re.search(r"avx2::|portable::|dense::|_tile|gemm|fused|"
                                                                   r"pool|attention|softmax", s)),
    ("GEMM", lambda d, s: "openblas" in d or "libmkl" in d or re.search(r"gemm|mkl_blas|brgemm|matmul", s, re.I)),
    ("convolution", lambda d, s: re.search(r"conv|im2col|col2im|unfold", s, re.I)),
    ("engine kernels", lambda d, s: re.search(r"accum::(dense|kernels|fused|pool|loss|attention)|FusedDense|"
                                              r"relu_max_pool|fused_", s)),
    ("memory allocation", lambda d, s: re.search(r"malloc|_int_free|cfree|free$|memalign|unlink_chunk|"
                                                 r"page_fault|clear_page|do_anonymous_page|folio|__mmap|munmap|"
                                                 r"mem_cgroup|memcg|lru|zap_|unmap_page|alloc_pages|"
                                                 r"CountingAllocator|alloc_cpu|free_cpu", s)),
    ("elementwise/copy", lambda d, s: re.search(r"Vectorized|vectorized|copy_kernel|reduced_float|_kernel\b|"
                                                r"kernel_impl|cpu_kernel|memmove|memcpy|memset|reduce|"
                                                r"add_kernel|mul_kernel|softmax|threshold", s)),
    ("Python", lambda d, s: "python" in d or s.startswith("_Py") or s.startswith("Py")),
    ("dispatch/autograd", lambda d, s: "libc10" in d or "libtorch" in d or "ld-linux" in d or
     "libstdc++" in d or re.search(r"c10::|at::|torch::|autograd|Dispatch|OperatorEntry|intrusive_ptr|"
                                   r"tls_get_addr|pthread|_Sp_counted", s)),
]


ARITHMETIC = ["oneDNN generated code", "GEMM", "convolution", "engine kernels"]


def categorise(dso, symbol):
    for name, test in CATEGORIES:
        if test(dso, symbol):
            return name
    return "other"


def command_for(a, python2, steps):
    if a.impl.startswith("engine"):
        build = f"{ROOT}/build" if a.impl == "engine-1.13" else f"{ROOT}/build-libtorch2"
        out = tempfile.mkdtemp(prefix="accum-profile-")
        cmd = [f"{build}/app/accum-run", "train",
               *engine_options(a.model, a.batch, a.k, steps, a.precision), "--threads", str(a.threads),
               "--eval-strategy", "no", "--save-strategy", "no", "--device", "cpu", "--quiet", "--output-dir", out]
        return cmd, out
    cmd = [python2, f"{HERE}/eager_reference.py", "--model", a.model, "--batch-size", str(a.batch),
           "--accumulation-steps", str(a.k), "--threads", str(a.threads), "--precision", a.precision,
           "--warmup-steps", str(WARMUP_STEPS), "--max-steps", str(steps)] + (["--compile"] if a.impl == "compile"
                                                                               else [])
    return cmd, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("impl", choices=["engine-1.13", "engine-2.11", "eager", "compile"])
    ap.add_argument("model", choices=["mlp", "cnn", "transformer"])
    ap.add_argument("batch", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("precision", choices=["fp32", "bf16"])
    ap.add_argument("threads", type=int)
    ap.add_argument("--steps", type=int, help="optimizer steps (default: 3 × the benchmark's)")
    ap.add_argument("--top", type=int, default=8, help="the costliest symbols to list")
    a = ap.parse_args()
    if (a.model, a.batch, a.k) not in STEPS and not a.steps:
        ap.error(f"no default number of steps for {a.model} {a.batch}×{a.k}: give --steps")
    if not shutil.which("perf"):
        print("where_time_goes.py: perf is not installed (Debian: apt-get install linux-perf)", file=sys.stderr)
        return 2
    steps = a.steps or 3 * STEPS[(a.model, a.batch, a.k)]
    python2 = torch2_python() if not a.impl.startswith("engine") else None
    cmd, out = command_for(a, python2, steps)
    with tempfile.TemporaryDirectory() as tmp:
        data = f"{tmp}/perf.data"
        env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), MKL_NUM_THREADS=str(a.threads))
        rec = subprocess.run(["perf", "record", "-F", "2000", "-o", data, "--", *cmd], capture_output=True,
                             text=True, env=env)
        if rec.returncode != 0:
            print(f"where_time_goes.py: perf record failed (exit {rec.returncode}):\n{rec.stderr[-1500:]}",
                  file=sys.stderr)
            return 1
        rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,symbol", "-g", "none",
                              "--stdio", "--percent-limit", "0", "-F", "overhead,dso,symbol"],
                             capture_output=True, text=True)
    shares = collections.Counter()
    symbols = []
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\S+(?: tid \d+)?)\s+\[[.k]\]\s+(.*)$", line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3).strip()
        cat = categorise(dso, sym)
        shares[cat] += pct
        symbols.append((pct, cat, dso, sym[:90]))
    unnamed = sum(pct for pct, cat, dso, sym in symbols if sym.startswith("0x") and "libtorch" in dso)
    timed = sum(v for k, v in shares.items() if k != "data loading (not timed)")
    if timed <= 0:
        print("where_time_goes.py: perf recorded no samples", file=sys.stderr)
        return 1
    print(f"{a.impl} {a.model} {a.batch}×{a.k} {a.precision} {a.threads} thread(s), {steps} optimizer steps: "
          "share of the CPU time (data loading left out)")
    for cat, v in sorted(shares.items(), key=lambda kv: -kv[1]):
        if cat != "data loading (not timed)":
            print(f"  {cat:20s} {v / timed:6.1%}")
    if out:
        # samples/s as the benchmark counts it (after the warm-up), from the run perf watched
        sps = rate_after_warmup(step_records(out))
        shutil.rmtree(out, ignore_errors=True)
        math = sum(shares[c] for c in ARITHMETIC) / timed
        print(f"  {sps:,.0f} samples/s under perf, {FLOPS[a.model] / 1e6:.2f} MFLOP per sample: "
              f"{FLOPS[a.model] * sps / a.threads / 1e9:.0f} GFLOP/s per thread over the whole time", end="")
        if math >= 0.05 and unnamed / timed <= 0.1:
            print(f", {FLOPS[a.model] * sps / (math * a.threads) / 1e9:.0f} GFLOP/s over the arithmetic's "
                  f"{math:.0%} (compare bench/peak_gemm.py)")
        else:
            print()
    if unnamed / max(timed, 1e-9) > 0.1:
        print(f"  note: {unnamed / timed:.0%} of the time is in LibTorch code without symbols (Debian's 1.13 "
              "library is stripped), counted as dispatch/autograd: the shares above are not to be trusted; "
              "profile engine-2.11 for the breakdown")
    print("costliest symbols:")
    for pct, cat, dso, sym in sorted(symbols, reverse=True)[:a.top]:
        print(f"  {pct / timed:6.1%}  {cat:18s} {dso:18s} {sym}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: GPL-3.0-or-later
