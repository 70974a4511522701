#!/usr/bin/python3
"""Benchmark harness: the engine against today's PyTorch, side by side in one go.

For each row (model × micro-batch shape × precision × threads) four implementations
train the same configuration in turn, the order rotating from round to round:

  engine 1.13   accum-run built against Debian's LibTorch 1.13 (build/)
  engine 2.11   accum-run built against LibTorch 2.11 (build-libtorch2/: the CUDA
                build, running on the CPU)
  eager 2.11    the same model and loop in eager PyTorch 2.11 (bench/eager_reference.py,
                in the environment of scripts/setup-libtorch2.sh)
  compile 2.11  the same with torch.compile(model) (inductor); its compilation is
                timed apart and left out of samples/s

Only training steps are timed, after the same warm-up on every side (the first
optimizer steps: bench/torch_reference.py's WARMUP_STEPS): accum-run's samples/s
comes from its step records, the references' from their own clock. Before each
run the script waits for the CPUs to be quiet and measures the share other
processes took during it; a disturbed run is run again, and left out if it stays
disturbed. Also: the accumulation overhead, (64, 4) against (256, 1), for every
implementation; the measured one-core GEMM peaks (fp32 and bf16, each library) and
each row's fraction of them. Writes bench/RESULTS.md; the tables of the fused
kernels (--fused) and of the GUI overhead (--gui) are measured on request and
carried over as they were otherwise, with the history and the hand-written sections.

Usage: bench/run_bench.py [--rounds N] [--quick] [--models mlp,cnn,transformer]
                          [--precisions fp32,bf16] [--threads 1,2] [--fused] [--gui]
"""
import argparse
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

from cpu_quiet import wait_for_idle
from torch_reference import WARMUP_STEPS, FreshCache, Reference, accum_run_timed, torch2_python

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY113 = "/usr/bin/python3"

# Training FLOPs per sample (multiply-add = 2), forward + backward. The first
# layer computes no input gradient (the input does not require grad), so its
# backward is one GEMM, the others two.
def mlp_flops():
    layers = [(784, 256), (256, 128), (128, 10)]
    fwd = sum(2 * i * o for i, o in layers)
    bwd = 2 * 784 * 256 + sum(2 * 2 * i * o for i, o in layers[1:])
    return fwd + bwd


def cnn_flops():
    conv1 = 2 * 28 * 28 * 32 * 1 * 9
    conv2 = 2 * 14 * 14 * 64 * 32 * 9
    fc = 2 * (3136 * 128 + 128 * 10)
    return (conv1 + conv2 + fc) + (conv1 + 2 * conv2 + 2 * fc)  # conv1: weight grad only


def transformer_flops(tokens=48, d=64, ff=128, layers=2, heads=4):
    per_layer = 2 * tokens * (d * 3 * d + d * d + 2 * d * ff) + 2 * 2 * tokens * tokens * d
    fwd = layers * per_layer + 2 * d * 2
    return 3 * fwd



FLOPS = {"mlp": mlp_flops(), "cnn": cnn_flops(), "transformer": transformer_flops()}
DATASETS = {"mlp": "fashion-mnist", "cnn": "fashion-mnist", "transformer": "synthetic-pairs"}
NAMES = {"mlp": "MLP", "cnn": "CNN", "transformer": "Transformer"}
# Timed optimizer steps per run (after the warm-up): about 1-3 s of training for the
# engine on two threads, longer on one.
STEPS = {("mlp", 64, 4): 600, ("mlp", 16, 16): 300, ("mlp", 256, 1): 600,
         ("cnn", 64, 4): 30, ("cnn", 16, 16): 24, ("cnn", 256, 1): 30,
         ("transformer", 64, 4): 24, ("transformer", 16, 16): 20}
SHAPES = [(64, 4), (16, 16)]
IMPLS = ["engine 1.13", "engine 2.11", "eager 2.11", "compile 2.11"]
# The accumulation overhead: (64, 4) against (256, 1), fp32, these threads.
OVERHEAD_MODELS, OVERHEAD_THREADS = ["mlp", "cnn"], 2


def engine_options(model, b, k, steps, precision):
    return ["--model", model, "--dataset", DATASETS[model], "--batch-size", str(b), "--accumulation-steps", str(k),
            "--max-steps", str(steps + WARMUP_STEPS), "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9",
            "--mixed-precision", "bf16" if precision == "bf16" else "no"]


class Bench:
    def __init__(self, a, python2):
        self.a, self.python2 = a, python2
        self.programs = {"engine 1.13": f"{a.build}/app/accum-run", "engine 2.11": f"{a.build2}/app/accum-run"}
        self.conditions = []  # (idle before, others' share during) of every run kept or not
        self.left_out = 0

    def measured(self, name, run):
        """One run, again while other processes took more than 1 - IDLE of the CPUs
        (at most --retries times); None when it stayed disturbed."""
        a = self.a
        for attempt in range(a.retries + 1):
            idle = wait_for_idle(a.idle, a.wait)
            sps, others = run()
            self.conditions.append((idle, others))
            print(f"    {name}: {sps:,.0f} samples/s (idle before {idle:.2f}, others {others:.0%})", flush=True)
            if others <= 1 - a.idle:
                return sps
        self.left_out += 1
        return None

    def row(self, cache, model, b, k, precision, threads):
        """{implementation: [samples/s of each round]}, and the compile time."""
        steps = max(4, int(STEPS[(model, b, k)] * self.a.scale))
        print(f"{NAMES[model]} {b}×{k} {precision} {threads} thread(s): starting the references", flush=True)
        refs = {}
        try:
            refs["eager 2.11"] = Reference(self.python2, model, b, k, threads, precision)
            refs["compile 2.11"] = Reference(self.python2, model, b, k, threads, precision, compile=True,
                                             cache_dir=cache.folder(f"{model}-{b}x{k}-{precision}-{threads}"))
            runs = {name: (lambda ref=ref: ref.run(steps)) for name, ref in refs.items()}
            for name, program in self.programs.items():
                options = engine_options(model, b, k, steps, precision)
                runs[name] = lambda program=program, options=options: accum_run_timed(program, options, threads)[:2]
            results = {name: [] for name in IMPLS}
            for r in range(self.a.rounds):
                order = IMPLS[r % len(IMPLS):] + IMPLS[:r % len(IMPLS)]
                for name in order:
                    sps = self.measured(name, runs[name])
                    if sps is not None:
                        results[name].append(sps)
            return results, refs["compile 2.11"].warmup_s, refs["eager 2.11"].warmup_s
        finally:
            for ref in refs.values():
                ref.close()


def summarise(values):
    return (statistics.median(values), min(values), max(values)) if values else (math.nan, math.nan, math.nan)


def paired(a, b):
    """Median of the per-round ratios a[i] / b[i] (each pair ran in the same round)."""
    n = min(len(a), len(b))
    return statistics.median(x / y for x, y in zip(a[:n], b[:n])) if n else math.nan


def fmt(s):
    return "—" if math.isnan(s[0]) else f"{s[0]:,.0f} ({s[1]:,.0f}–{s[2]:,.0f})"


def gemm_peak(python, threads, dtype):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    return float(subprocess.run([python, f"{HERE}/peak_gemm.py", str(threads), dtype], capture_output=True,
                                text=True, check=True, env=env).stdout)


def accum_run_summary(build, model, dataset, b, k, steps):
    """accum-run's own summary samples/s (from the first step), for the GUI-overhead table,
    whose studio side reports the same."""
    import json
    import tempfile
    with tempfile.TemporaryDirectory() as out:
        cmd = [f"{build}/app/accum-run", "--model", model, "--dataset", dataset, "--batch-size", str(b),
               "--accumulation-steps", str(k), "--max-steps", str(steps), "--lr", "0.05", "--optimizer", "sgd",
               "--momentum", "0.9", "--eval-strategy", "no", "--save-strategy", "no", "--quiet", "--output-dir", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(f"{out}/summary.json"))["samples_per_second"]


# The GUI overhead is measured on longer runs (about 6 to 10 s each), so the window's
# start-up (first layout and paint, font loading) is a small part of the timed steps,
# and in twice as many pairs as --rounds: the window's own cost is 1-3% (its
# thread is held to about half a percent of one core, and the training thread it
# displaces holds up its partner), inside this machine's run-to-run noise.
GUI_CONFIGS = [("MLP 64×4", "mlp", "fashion-mnist", 64, 4, 3000), ("CNN 64×4", "cnn", "fashion-mnist", 64, 4, 150)]



def studio(build, model, dataset, b, k, steps):
    """The same run in the studio window (offscreen), from its end-of-run line."""
    exe = f"{build}/app/accum-studio"
    with tempfile.TemporaryDirectory() as tmp:
        config = {"model": model, "dataset": dataset, "batch-size": b, "accumulation-steps": k, "max-steps": steps,
                  "epochs": 0, "lr": 0.05, "optimizer": "sgd", "momentum": 0.9,
                  "eval-strategy": "no", "save-strategy": "no"}
        path = f"{tmp}/config.json"
        json.dump(config, open(path, "w"))
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=tmp, HOME=tmp)
        p = subprocess.run([exe, "--config", path, "--autorun", "--quit-after-run"], capture_output=True, text=True,
                           env=env, timeout=600)
        m = re.search(r"([0-9.]+) samples/s", p.stderr)
        if not m:
            raise RuntimeError(f"accum-studio ended (exit {p.returncode}) without its end-of-run line:\n"
                               + "\n".join(p.stderr.splitlines()[-5:]))
        return float(m.group(1))



def gui_overhead(build, rounds, scale):
    """The studio window (offscreen) against accum-run on the same configuration."""
    gui_rows = []
    if not os.path.exists(f"{build}/app/accum-studio"):
        return gui_rows
    for name, model, dataset, b, k, steps in GUI_CONFIGS:
        steps = max(4, int(steps * scale))
        gui, cli = [], []
        for i in range(2 * rounds):
            # Who goes first alternates (A B, B A, ...), so a machine that drifts
            # slower or faster during a pair favours neither side.
            runs = [(gui, studio), (cli, accum_run_summary)]
            for results, run in reversed(runs) if i % 2 else runs:
                results.append(run(build, model, dataset, b, k, steps))
        x, y = summarise(gui), summarise(cli)
        pair, best = paired(gui, cli), max(gui) / max(cli)
        gui_rows.append((name, steps, x, y, x[0] / y[0], (pair, best)))
        print(f"GUI overhead {name}: studio {x[0]:.0f} vs accum-run {y[0]:.0f}: {x[0] / y[0]:.3f}, "
              f"paired {pair:.3f}, best {best:.3f}", flush=True)
    return gui_rows




KEPT_SECTION = "## Figures quoted in the code"


def carried_sections(path, prefixes):
    """The sections of the old output whose headings start with one of these
    prefixes, as they were (heading to the next heading), in their order."""
    try:
        text = open(path).read()
    except OSError:
        return {}
    found = {}
    for chunk in re.split(r"\n(?=## )", "\n" + text):
        chunk = chunk.strip("\n")
        for prefix in prefixes:
            if chunk.startswith(prefix):
                found.setdefault(prefix, []).append(chunk)
    return found


def fused_rows(bench, build, rounds, scale):
    """The engine's fused CPU kernels against LibTorch's operators (--cpu-kernels aten), both builds."""
    rows = []
    for model in ["mlp", "cnn", "transformer"]:
        for b, k in SHAPES:
            steps = max(4, int(STEPS[(model, b, k)] * scale))
            for label, program in bench.programs.items():
                on, off = [], []
                for r in range(rounds):
                    for kernels, results in ((("fused", on), ("aten", off)) if r % 2 == 0 else
                                             (("aten", off), ("fused", on))):
                        options = engine_options(model, b, k, steps, "fp32") + ["--cpu-kernels", kernels]
                        sps = bench.measured(f"{label} {kernels}",
                                             lambda: accum_run_timed(program, options, OVERHEAD_THREADS)[:2])
                        if sps is not None:
                            results.append(sps)
                x, y = summarise(on), summarise(off)
                rows.append((f"{NAMES[model]} {b}×{k}", label, x, y, x[0] / y[0]))
                print(f"fused kernels {NAMES[model]} {b}×{k} {label}: {x[0]:.0f} vs {y[0]:.0f}", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke test of the harness)")
    ap.add_argument("--build", default=f"{ROOT}/build", help="the LibTorch 1.13 build")
    ap.add_argument("--build2", default=f"{ROOT}/build-libtorch2", help="the LibTorch 2.11 build")
    ap.add_argument("--models", default="mlp,cnn,transformer")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--no-overhead", action="store_true", help="leave out the accumulation-overhead rows")
    ap.add_argument("--fused", action="store_true", help="measure the fused-kernels table again")
    ap.add_argument("--gui", action="store_true", help="measure the GUI-overhead table again")
    ap.add_argument("--idle", type=float, default=0.85, help="CPU idle fraction to wait for before each run")
    ap.add_argument("--wait", type=float, default=300, help="seconds to wait at most for that idle fraction")
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--output", default=f"{HERE}/RESULTS.md")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error(f"--rounds: {a.rounds} is not a positive number of rounds")
    a.scale = 0.25 if a.quick else 1.0
    models = a.models.split(",")
    precisions = a.precisions.split(",")
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        ap.error(f"--threads: {a.threads!r} is not a list of thread counts")
    for name, values, known in (("--models", models, NAMES), ("--precisions", precisions, ("fp32", "bf16"))):
        if unknown := [v for v in values if v not in known]:
            ap.error(f"{name}: {', '.join(unknown)} unknown (known: {', '.join(known)})")
    for build in (a.build, a.build2):
        if not os.path.exists(f"{build}/app/accum-run"):
            print(f"run_bench.py: no accum-run in {build}/app: build both (scripts/setup.sh, "
                  "scripts/build-libtorch2.sh) or pass --build/--build2", file=sys.stderr)
            return 2
    python2 = torch2_python()
    bench = Bench(a, python2)

    peaks = {("1.13", "float32"): gemm_peak(PY113, 1, "float32"), ("1.13", "bfloat16"): gemm_peak(PY113, 1, "bfloat16"),
             ("2.11", "float32"): gemm_peak(python2, 1, "float32"),
             ("2.11", "bfloat16"): gemm_peak(python2, 1, "bfloat16")}
    print("one-core GEMM peaks (GFLOP/s): " + ", ".join(f"{v} {d} {p:.0f}" for (v, d), p in peaks.items()), flush=True)
    peak = {"fp32": max(peaks[("1.13", "float32")], peaks[("2.11", "float32")]),
            "bf16": max(peaks[("1.13", "bfloat16")], peaks[("2.11", "bfloat16")])}

    started = time.time()
    rows, overhead = [], {}
    with FreshCache() as cache:
        for model in models:
            for b, k in SHAPES:
                for precision in precisions:
                    for t in threads:
                        results, compile_s, eager_warmup_s = bench.row(cache, model, b, k, precision, t)
                        rows.append(((model, b, k, precision, t), results, compile_s, eager_warmup_s))
                        med = {n: summarise(v)[0] for n, v in results.items()}
                        print(f"  medians: " + ", ".join(f"{n} {m:,.0f}" for n, m in med.items()), flush=True)
        if not a.no_overhead:
            for model in [m for m in OVERHEAD_MODELS if m in models]:
                results, *_ = bench.row(cache, model, 256, 1, "fp32", OVERHEAD_THREADS)
                overhead[model] = results
    fused = fused_rows(bench, a.build, a.rounds, a.scale) if a.fused else None
    gui = gui_overhead(a.build, a.rounds, a.scale) if a.gui else None
    minutes = (time.time() - started) / 60

    cpu = "unknown"
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1)
    except Exception:
        pass
    flags = open("/proc/cpuinfo").read()
    bf16_isa = "avx512_bf16" in flags or "amx_bf16" in flags
    torch2 = subprocess.run([python2, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                            text=True).stdout.strip()
    torch1 = subprocess.run([PY113, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                            text=True).stdout.strip()
    idle = [c[0] for c in bench.conditions]
    others = [c[1] for c in bench.conditions]
    command = "bench/run_bench.py" + (f" --rounds {a.rounds}" if a.rounds != 3 else "") + \
        (" --quick" if a.quick else "") + (" --fused" if a.fused else "") + (" --gui" if a.gui else "")
    lines = [
        "# Benchmark results", "",
        f"Machine: {cpu}, {os.cpu_count()} cores ({'AVX-512 BF16' if bf16_isa else 'no bf16 instructions'}), "
        f"{platform.system()} {platform.release()}. Engine builds: Debian's LibTorch {torch1} (OpenBLAS for fp32 "
        f"GEMMs, oneDNN for bf16) and LibTorch {torch2} (MKL for fp32, oneDNN for bf16; the CUDA build, on the CPU). "
        f"References: eager PyTorch {torch2} and `torch.compile` (inductor) in the same environment.", "",
        "Measured one-core GEMM peaks (bench/peak_gemm.py, 1024² matrix product, best of 12): " +
        ", ".join(f"{d} {p:.0f} GFLOP/s ({'LibTorch ' + v})" for (v, d), p in peaks.items()) + ".", "",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d')}, {minutes:.0f} minutes). Each figure is the median of "
        f"{a.rounds} runs with the range in brackets; the four implementations of a row take turns, the order "
        f"rotating from round to round. Only training steps are timed, after {WARMUP_STEPS} warm-up optimizer steps "
        "on every side (for `torch.compile` they include the compilation, reported apart); SGD momentum 0.9, the "
        "gradient norm and the window loss read once per optimizer step everywhere. CPU idle before the runs "
        f"{min(idle):.2f}–{max(idle):.2f} (threshold {a.idle}); other processes took {min(others):.0%}–"
        f"{max(others):.0%} of the CPUs during them; {bench.left_out} run(s) left out as disturbed after "
        f"{a.retries + 1} tries.", "",
        "## The engine against PyTorch 2.11 (samples/s)", "",
        "*best engine / best PyTorch*: the faster build's median over the faster of eager and compiled (target "
        "≥ 1.0 ×); *paired*: the median over rounds of the same ratio within a round; *bf16 / fp32*: the best "
        "engine build's bf16 row over its fp32 row (target ≥ 1.0 × where the CPU has bf16 instructions); "
        "*of peak*: the best engine's training FLOPs per second over the one-core GEMM peak of the row's "
        "precision times its threads.", "",
        "| model | micro-batch | precision | threads | engine 1.13 | engine 2.11 | eager 2.11 | compile 2.11 "
        "| compile s | best engine / best PyTorch | paired | bf16 / fp32 | of peak |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_key = {key: results for key, results, *_ in rows}
    verdicts = []
    for (model, b, k, precision, t), results, compile_s, _ in rows:
        s = {n: summarise(v) for n, v in results.items()}
        engine_best = max(("engine 1.13", "engine 2.11"), key=lambda n: -1 if math.isnan(s[n][0]) else s[n][0])
        torch_best = max(("eager 2.11", "compile 2.11"), key=lambda n: -1 if math.isnan(s[n][0]) else s[n][0])
        ratio = s[engine_best][0] / s[torch_best][0]
        rounds_pairs = [max(e1, e2) / max(p1, p2) for e1, e2, p1, p2 in zip(results["engine 1.13"], results[
            "engine 2.11"], results["eager 2.11"], results["compile 2.11"])]
        pair = statistics.median(rounds_pairs) if rounds_pairs else math.nan
        bf16_vs = "—"
        if precision == "bf16" and (model, b, k, "fp32", t) in by_key:
            fp = by_key[(model, b, k, "fp32", t)]
            best_fp = max(summarise(fp["engine 1.13"])[0], summarise(fp["engine 2.11"])[0])
            bf16_vs = f"{s[engine_best][0] / best_fp:.2f}×"
            verdicts.append(((model, b, k, precision, t), "bf16/fp32", s[engine_best][0] / best_fp))
        of_peak = FLOPS[model] * s[engine_best][0] / (peak[precision] * 1e9 * t)
        verdicts.append(((model, b, k, precision, t), "vs PyTorch", ratio))
        short = lambda n: n.split()[1]
        lines.append(f"| {NAMES[model]} | {b} × {k} | {precision} | {t} | {fmt(s['engine 1.13'])} | "
                     f"{fmt(s['engine 2.11'])} | {fmt(s['eager 2.11'])} | {fmt(s['compile 2.11'])} | {compile_s:.0f} | "
                     f"**{ratio:.2f}×** ({short(engine_best)} / {torch_best.split()[0]}) | {pair:.2f}× | {bf16_vs} "
                     f"| {of_peak:.0%} |")
    behind = [(key, what, r) for key, what, r in verdicts if r < 1.0]
    lines += ["", f"Rows below a target: {len(behind)} of {len(verdicts)} comparisons" +
              (": " + "; ".join(f"{NAMES[m]} {b}×{k} {p} {t}t {what} {r:.2f}×" for (m, b, k, p, t), what, r in behind)
               if behind else "") + "."]
    if overhead:
        lines += ["", f"## Accumulation overhead: (64, 4) against (256, 1), fp32, {OVERHEAD_THREADS} threads", "",
                  "The same effective batch: (64, 4) runs four forward and backward passes per optimizer step where "
                  "(256, 1) runs one. (64, 4) is the main table's row; (256, 1) ran after it, the same way.", "",
                  "| model | implementation | 64 × 4 | 256 × 1 | (64, 4) / (256, 1) |", "|---|---|---|---|---|"]
        for model, results in overhead.items():
            small = by_key.get((model, 64, 4, "fp32", OVERHEAD_THREADS))
            for name in IMPLS:
                x = summarise(small[name]) if small else (math.nan,) * 3
                y = summarise(results[name])
                lines.append(f"| {NAMES[model]} | {name} | {fmt(x)} | {fmt(y)} | **{x[0] / y[0]:.3f}** |")
    carried = carried_sections(a.output, ["## Fused CPU kernels", "## GUI overhead", "## What limits",
                                          "## History", KEPT_SECTION])
    if fused is not None:
        lines += ["", f"## Fused CPU kernels: the engine with and without them ({OVERHEAD_THREADS} threads, fp32)", "",
                  "| configuration | build | fused | LibTorch operators (`--cpu-kernels aten`) | ratio |",
                  "|---|---|---|---|---|"]
        for name, label, x, y, r in fused:
            lines.append(f"| {name} | {label} | {fmt(x)} | {fmt(y)} | **{r:.2f}×** |")
    elif "## Fused CPU kernels" in carried:
        lines += [""] + carried["## Fused CPU kernels"]
    if gui is not None:
        lines += ["", "## GUI overhead: the studio window (offscreen) vs accum-run", "",
                  "| configuration | optimizer steps | studio | accum-run | ratio of medians | "
                  "median of paired ratios | ratio of best runs |", "|---|---|---|---|---|---|---|"]
        for name, steps, x, y, r, (pair, best) in gui:
            lines.append(f"| {name} | {steps} | {fmt(x)} | {fmt(y)} | **{r:.3f}** | {pair:.3f} | {best:.3f} |")
    elif "## GUI overhead" in carried:
        lines += [""] + carried["## GUI overhead"]
    for prefix in ("## What limits", "## History", KEPT_SECTION):
        for chunk in carried.get(prefix, []):
            lines += [""] + [chunk]
    open(a.output, "w").write("\n".join(lines) + "\n")
    print(f"wrote {a.output}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.CalledProcessError) as e:  # a run failed: say which, without a traceback
        print(f"run_bench.py: {e}", file=sys.stderr)
        sys.exit(1)
# SPDX-License-Identifier: GPL-3.0-or-later
