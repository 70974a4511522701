#!/usr/bin/python3
"""Benchmark harness: accum-run against eager PyTorch (Python), side by side in
one go, alternating A B A B, plus the accumulation overhead, the GUI overhead
and model FLOPs utilisation. Writes bench/RESULTS.md.

Usage: bench/run_bench.py [--rounds N] [--quick] [--build DIR]

Only the training steps are timed: accum-run's summary samples_per_second
counts from the first step (data loading from disk, model building and the
final evaluation are outside the clock; --eval-strategy no), and the Python
reference starts its clock at its first step too.
"""
import argparse
import importlib.util
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"

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


# Threads per model (LibTorch intra-op, OpenBLAS pool). The engine's defaults are
# chosen by measurement in engine/src/session.cpp. The Python reference gets the
# split that is fastest for eager PyTorch: the same, except for the MLP, whose fused
# layers use LibTorch's pool where eager PyTorch is fastest with its GEMMs on
# OpenBLAS's threads and one LibTorch thread (two made it about 3x slower).
CORES = min(os.cpu_count() or 1, 4)
THREADS = {"mlp": (CORES, 1), "cnn": (CORES, 1), "transformer": (1, 1)}
EAGER_THREADS = dict(THREADS, mlp=(1, CORES))
CONFIGS = [
    # name, model, dataset, batch, K, max_steps
    ("MLP 64×4", "mlp", "fashion-mnist", 64, 4, 600),
    ("MLP 16×16", "mlp", "fashion-mnist", 16, 16, 200),
    ("CNN 64×4", "cnn", "fashion-mnist", 64, 4, 40),
    ("CNN 16×16", "cnn", "fashion-mnist", 16, 16, 20),
    ("Transformer 64×4", "transformer", "synthetic-pairs", 64, 4, 30),
    ("Transformer 16×16", "transformer", "synthetic-pairs", 16, 16, 15),
]
FLOPS = {"mlp": mlp_flops(), "cnn": cnn_flops(), "transformer": transformer_flops()}


# The GUI overhead is measured on longer runs (about 6 to 10 s each), so the window's
# start-up (first layout and paint, font loading) is a small part of the timed steps,
# and in twice as many pairs as --rounds: the window's own cost is 1-3% (its
# thread is held to about half a percent of one core, and the training thread it
# displaces holds up its partner), inside this machine's run-to-run noise.
GUI_CONFIGS = [("MLP 64×4", "mlp", "fashion-mnist", 64, 4, 3000), ("CNN 64×4", "cnn", "fashion-mnist", 64, 4, 150)]


def accum_run(build, model, dataset, b, k, steps, extra_env=None, threads=None, extra_args=()):
    with tempfile.TemporaryDirectory() as out:
        cmd = [f"{build}/app/accum-run", "--model", model, "--dataset", dataset, "--batch-size", str(b),
               "--accumulation-steps", str(k), "--max-steps", str(steps),
               *(["--threads", str(threads)] if threads else []), *extra_args,
               "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9", "--eval-strategy", "no",
               "--save-strategy", "no", "--quiet", "--output-dir", out]
        env = dict(os.environ, **(extra_env or {}))
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        return json.load(open(f"{out}/summary.json"))["samples_per_second"]


def eager(model, b, k, steps):
    intra, blas = EAGER_THREADS[model]
    cmd = [PY, f"{HERE}/eager_reference.py", "--model", model, "--batch-size", str(b), "--accumulation-steps", str(k),
           "--max-steps", str(steps), "--threads", str(intra)]
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)["samples_per_second"]


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


def summarise(values):
    return statistics.median(values), min(values), max(values)


def paired(a, b):
    """Median of the per-round ratios a[i] / b[i] (each pair ran back to back), and
    the ratio of the best runs: on this shared machine interference only ever
    slows a run down, so the best of N is the least disturbed figure."""
    return statistics.median(x / y for x, y in zip(a, b)), max(a) / max(b)


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
            runs = [(gui, studio), (cli, accum_run)]
            for results, run in reversed(runs) if i % 2 else runs:
                results.append(run(build, model, dataset, b, k, steps))
        x, y, (pair, best) = summarise(gui), summarise(cli), paired(gui, cli)
        gui_rows.append((name, steps, x, y, x[0] / y[0], (pair, best)))
        print(f"GUI overhead {name}: studio {x[0]:.0f} vs accum-run {y[0]:.0f}: {x[0] / y[0]:.3f}, "
              f"paired {pair:.3f}, best {best:.3f}", flush=True)
    return gui_rows


def reading_notes(rounds, mlp_big_samples_per_s):
    """The closing section of RESULTS.md: how to read the tables."""
    step_ms = f"about {256 / mlp_big_samples_per_s * 1000:.1f} ms" if mlp_big_samples_per_s else "a few ms"
    return [
        "", "## Reading these figures", "",
        "- **Noise.** This machine is a shared virtual machine: a run can land in a slower mode and stay",
        "  there for seconds, so each table gives the ratio of medians, the median of the per-round ratios",
        f"  (each pair ran back to back) and the ratio of the best runs. This report used {rounds} rounds",
        f"  ({2 * rounds} pairs for the GUI overhead: the window's thread is held to about half a percent",
        "  of one core, and costs training less than the noise).",
        "- **Fused kernels.** `--cpu-kernels fused` (the default) runs the MLP's Linear-ReLU stack as one",
        "  operator (`engine/src/kernels/fused_dense.cpp`), which, while a run trains, adds each weight",
        "  gradient straight into `.grad`, the transformer's attention (`fused_attention.cpp`) and the",
        "  softmax cross-entropy of all three models (`fused_loss.cpp`), and the CNN's few-channel first",
        "  convolution (im2col) and ReLU + max-pool (`fused_pool.cpp`); `--cpu-kernels aten` runs all of",
        "  them as LibTorch operators.",
        "- **Accumulation overhead.** (64, 4) runs four forward and backward passes per optimizer step where",
        "  (256, 1) runs one, so it pays four times whatever does not grow with the batch: the autograd",
        "  engine's run, each operator's dispatch, the loss, and a read and a write of every weight's",
        f"  gradient in `.grad`. The MLP's whole step is short ({step_ms} at 256 × 1), so these fixed costs",
        "  weigh most there.",
    ]


KEPT_SECTION = "## Figures quoted in the code"


def kept_section(path):
    """The output's hand-written section of figures that code comments cite (measured by other
    programs, once): carried over as it is, from its heading to the next one or the end."""
    try:
        text = open(path).read()
    except OSError:
        return []
    start = text.find("\n" + KEPT_SECTION + "\n")
    if start < 0:
        return []
    section = text[start + 1:]
    end = section.find("\n## ", len(KEPT_SECTION))
    return [""] + (section if end < 0 else section[:end]).rstrip("\n").split("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke test of the harness)")
    ap.add_argument("--build", default=f"{ROOT}/build")
    ap.add_argument("--output", default=f"{HERE}/RESULTS.md")
    ap.add_argument("--gui-only", action="store_true",
                    help="only the GUI overhead, printed (RESULTS.md is left as it is)")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error(f"--rounds: {a.rounds} is not a positive number of rounds")
    scale = 0.25 if a.quick else 1.0
    if not os.path.exists(f"{a.build}/app/accum-run"):
        print(f"run_bench.py: no accum-run in {a.build}/app; build first (bash scripts/setup.sh) or pass --build DIR",
              file=sys.stderr)
        return 2
    if a.gui_only:
        if not gui_overhead(a.build, a.rounds, scale):
            print(f"run_bench.py: --gui-only needs accum-studio in {a.build}/app (a build with the GUI)",
                  file=sys.stderr)
            return 2
        return 0
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("numpy") is None:
        print("run_bench.py: the eager-PyTorch reference needs Debian's python3-torch and python3-numpy "
              "(apt-get install python3-torch python3-numpy); run it with /usr/bin/python3", file=sys.stderr)
        return 2
    def gemm_peak(threads):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        return float(subprocess.run([PY, f"{HERE}/peak_gemm.py", str(threads)], capture_output=True, text=True,
                                    check=True, env=env).stdout)
    peak = gemm_peak(1)
    peak_all = gemm_peak(os.cpu_count() or 1)
    print(f"measured FP32 GEMM peak: {peak:.1f} GFLOP/s on one core, {peak_all:.1f} on {os.cpu_count()}", flush=True)

    rows, accumulation_rows = [], []
    for name, model, dataset, b, k, steps in CONFIGS:
        steps = max(4, int(steps * scale))
        ours, theirs = [], []
        for _ in range(a.rounds):  # A B A B
            ours.append(accum_run(a.build, model, dataset, b, k, steps))
            theirs.append(eager(model, b, k, steps))
        o, t = summarise(ours), summarise(theirs)
        mfu = FLOPS[model] * o[0] / (peak * 1e9)
        threads = "%d / %d, %d / %d" % (THREADS[model] + EAGER_THREADS[model])
        rows.append((name, threads, o, t, o[0] / t[0], paired(ours, theirs), mfu))
        print(f"{name}: accum-run {o[0]:.0f} samples/s, eager {t[0]:.0f}, ratio {o[0] / t[0]:.2f}, MFU {mfu:.0%}",
              flush=True)

    # The MLP on exactly one core (--threads 1: one LibTorch and one BLAS thread), for MFU
    # against the single-core peak.
    single = summarise([accum_run(a.build, "mlp", "fashion-mnist", 256, 1, max(4, int(600 * scale)), threads=1)
                        for _ in range(a.rounds)])
    single_mfu = FLOPS["mlp"] * single[0] / (peak * 1e9)
    print(f"MLP 256×1 on one core: {single[0]:.0f} samples/s, MFU {single_mfu:.0%}", flush=True)

    # The MLP's runs are longer (about 3 s each) than in the table above: its step is
    # short, and the ratio compares two fast runs.
    for name, model, dataset, steps in [("MLP", "mlp", "fashion-mnist", 1500), ("CNN", "cnn", "fashion-mnist", 40)]:
        steps = max(4, int(steps * scale))
        acc, big = [], []
        for _ in range(a.rounds):
            acc.append(accum_run(a.build, model, dataset, 64, 4, steps))
            big.append(accum_run(a.build, model, dataset, 256, 1, steps))
        x, y = summarise(acc), summarise(big)
        accumulation_rows.append((name, x, y, x[0] / y[0], paired(acc, big)))
        print(f"accumulation overhead {name}: (64,4) {x[0]:.0f} vs (256,1) {y[0]:.0f}: {x[0] / y[0]:.3f}", flush=True)

    # The engine's fused CPU kernels (--cpu-kernels fused, the default) against the same
    # engine running those layers and the loss as LibTorch operators (--cpu-kernels aten),
    # alternating. The MLP without them goes back to its operator threads (one LibTorch
    # thread, every core for OpenBLAS), as the engine chooses. The CNN's rows measure
    # its first convolution, its ReLU + max-pool and the loss.
    fused_rows = []
    for name, model, dataset, b, k, steps in CONFIGS:
        steps = max(4, int(steps * scale))
        on, off = [], []
        for _ in range(a.rounds):
            on.append(accum_run(a.build, model, dataset, b, k, steps))
            off.append(accum_run(a.build, model, dataset, b, k, steps, extra_args=("--cpu-kernels", "aten")))
        x, y = summarise(on), summarise(off)
        switch = "--cpu-kernels aten"
        fused_rows.append((name, switch, x, y, x[0] / y[0]))
        print(f"fused kernels {name}: {x[0]:.0f} vs operators {y[0]:.0f}: {x[0] / y[0]:.2f}", flush=True)

    gui_rows = gui_overhead(a.build, a.rounds, scale)

    cpu = "unknown"
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1)
    except Exception:
        pass
    import torch
    fmt = lambda s: f"{s[0]:,.0f} ({s[1]:,.0f}–{s[2]:,.0f})"
    lines = [
        "# Benchmark results", "",
        f"Machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"LibTorch/PyTorch {torch.__version__} with OpenBLAS; measured FP32 GEMM peak {peak:.1f} GFLOP/s on one "
        f"core, {peak_all:.1f} GFLOP/s on {os.cpu_count()} (bench/peak_gemm.py, 1024² SGEMM).", "",
        f"Command: `bench/run_bench.py --rounds {a.rounds}{' --quick' if a.quick else ''}` "
        f"({time.strftime('%Y-%m-%d')}). Each figure is the median of {a.rounds} runs, alternating A B A B, "
        "with the range in brackets. Only training steps are timed (no data loading from disk, no evaluation); "
        "SGD momentum 0.9, the gradient norm and the window loss read once per optimizer step in both.", "",
        "## accum-run vs eager PyTorch (samples/s)", "",
        "| configuration | threads (LibTorch / BLAS): accum-run, eager | accum-run | eager PyTorch | ratio of medians | "
        "median of paired ratios | ratio of best runs | MFU vs one core |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, threads, o, t, ratio, (pair, best), mfu in rows:
        lines.append(f"| {name} | {threads} | {fmt(o)} | {fmt(t)} | **{ratio:.2f}×** | {pair:.2f}× | {best:.2f}× "
                     f"| {mfu:.0%} |")
    lines += ["", "MFU = training FLOPs per sample (forward + backward, counted in bench/run_bench.py) × samples/s "
              "÷ the measured single-core peak (a configuration using two threads can exceed 100%).", "",
              f"MLP at micro-batch 256 × 1 on exactly one core (`--threads 1`): {fmt(single)} samples/s, "
              f"**MFU {single_mfu:.0%}** of the single-core peak.", "",
              "## Accumulation overhead: (64, 4) vs (256, 1), same effective batch", "",
              "| model | 64 × 4 | 256 × 1 | ratio of medians | median of paired ratios | ratio of best runs |",
              "|---|---|---|---|---|---|"]
    for name, x, y, r, (pair, best) in accumulation_rows:
        lines.append(f"| {name} | {fmt(x)} | {fmt(y)} | **{r:.3f}** | {pair:.3f} | {best:.3f} |")
    lines += ["", "## Fused CPU kernels: the engine with and without them", "",
              "| configuration | fused | LibTorch operators | switched off by | ratio |",
              "|---|---|---|---|---|"]
    for name, switch, x, y, r in fused_rows:
        lines.append(f"| {name} | {fmt(x)} | {fmt(y)} | `{switch}` | **{r:.2f}×** |")
    lines += ["", "## GUI overhead: the studio window (offscreen) vs accum-run", ""]
    if gui_rows:
        lines += ["| configuration | optimizer steps | studio | accum-run | ratio of medians | "
                  "median of paired ratios | ratio of best runs |", "|---|---|---|---|---|---|---|"]
        for name, steps, x, y, r, (pair, best) in gui_rows:
            lines.append(f"| {name} | {steps} | {fmt(x)} | {fmt(y)} | **{r:.3f}** | {pair:.3f} | {best:.3f} |")
    else:
        lines.append("Not measured: accum-studio was not built.")
    lines += reading_notes(a.rounds, next((y[0] for name, x, y, *_ in accumulation_rows if name == "MLP"), None))
    lines += kept_section(a.output)
    open(a.output, "w").write("\n".join(lines) + "\n")
    print(f"wrote {a.output}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.CalledProcessError) as e:  # a run failed: say which, without a traceback
        print(f"run_bench.py: {e}", file=sys.stderr)
        sys.exit(1)
