"""The PyTorch side of the speed benchmarks, shared by bench/run_bench.py and
bench/amp_run_bench.py: eager PyTorch 2.11 and torch.compile (inductor), from the
virtual environment of scripts/setup-libtorch2.sh, each kept in one process
(bench/eager_reference.py --serve) so that the compiled graphs and the warm-up
are paid once and the timed runs alternate with accum-run's.

And what both sides' measurements share: the CPUs' quiet before a run and the
share other processes took during it (/proc/stat, less the run's own CPU time).
"""
import json
import math
import os
import resource
import shutil
import subprocess
import tempfile

from cpu_quiet import cpu_sample

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Optimizer steps trained (and not timed) before the timed ones, on both sides: the
# first steps pay one-off costs (oneDNN primitives made, the allocator's first
# blocks, with torch.compile the compilation), which a user pays once per run.
WARMUP_STEPS = 3


def torch2_python():
    """The torch 2.11 environment's python (made once by scripts/setup-libtorch2.sh)."""
    done = subprocess.run([f"{ROOT}/scripts/setup-libtorch2.sh", "--python"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("scripts/setup-libtorch2.sh could not give the torch 2.11 environment:\n"
                           + done.stderr[-2000:])
    return done.stdout.strip().splitlines()[-1]


class Disturbance:
    """The share of all CPUs' time that other processes took between start() and
    stop(): busy time less the measured processes' own (user + system)."""

    def __init__(self, pid=None):
        self.pid = pid  # a server process; None: this process's children (a subprocess run)

    def _own_ticks(self):
        if self.pid is None:
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (r.ru_utime + r.ru_stime) * os.sysconf("SC_CLK_TCK")
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)

    def start(self):
        self.idle0, self.total0 = cpu_sample()
        self.own0 = self._own_ticks()

    def stop(self):
        own = self._own_ticks() - self.own0
        idle1, total1 = cpu_sample()
        total = max(1, total1 - self.total0)
        return max(0.0, (total - (idle1 - self.idle0) - own) / total)


class Reference:
    """One eager_reference.py --serve process: a model, a micro-batch shape, a
    precision and a thread count; run(steps) -> (samples/s, others' share)."""

    def __init__(self, python, model, batch, k, threads, precision="fp32", compile=False, cache_dir=None):
        self.name = ("compile" if compile else "eager") + f" {model} {batch}x{k} {precision} {threads}t"
        cmd = [python, f"{HERE}/eager_reference.py", "--model", model, "--batch-size", str(batch),
               "--accumulation-steps", str(k), "--threads", str(threads), "--precision", precision,
               "--warmup-steps", str(WARMUP_STEPS), "--serve"] + (["--compile"] if compile else [])
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads))
        if cache_dir:  # a fresh inductor cache: the compile time reported is a first compile's
            env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env)
        ready = self._answer()
        self.warmup_s = ready["warmup_s"]
        self.torch = ready["torch"]

    def _answer(self):
        line = self.process.stdout.readline()
        if not line:
            err = self.process.stderr.read()
            raise RuntimeError(f"{self.name}: the reference process ended (exit {self.process.wait()}):\n"
                               + err[-2000:])
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{self.name}: {answer['error']}")
        return answer

    def run(self, steps):
        d = Disturbance(self.process.pid)
        d.start()
        self.process.stdin.write(f"{steps}\n")
        self.process.stdin.flush()
        answer = self._answer()
        others = d.stop()
        if not math.isfinite(answer["last_loss"]):
            raise RuntimeError(f"{self.name}: the loss is {answer['last_loss']}")
        return answer["samples_per_second"], others

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class FreshCache:
    """A temporary inductor cache folder for one benchmark run (removed at the end)."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="accum-bench-inductor-")
        return self

    def folder(self, name):
        path = os.path.join(self.path, name)
        os.makedirs(path, exist_ok=True)
        return path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def rate_after_warmup(steps):
    """samples/s over a run's step records (metrics.jsonl, elapsed_s and samples_seen)
    after its first WARMUP_STEPS optimizer steps. samples_seen counts every rank's
    samples (rank 0's records of a data-parallel run say the whole run's), so this is
    the run's rate whatever its number of processes."""
    if len(steps) <= WARMUP_STEPS:
        raise RuntimeError(f"accum-run logged {len(steps)} steps, not more than the {WARMUP_STEPS} of the warm-up")
    first, last = steps[WARMUP_STEPS - 1], steps[-1]
    return (last["samples_seen"] - first["samples_seen"]) / (last["elapsed_s"] - first["elapsed_s"])


def step_records(out):
    """The step records of an accum-run output directory."""
    with open(os.path.join(out, "metrics.jsonl")) as f:
        return [r for r in map(json.loads, f) if r.get("type") == "step"]


def accum_run_timed(program, options, threads, log=None):
    """accum-run with the warm-up left out of the clock, as the references do
    (rate_after_warmup). Returns (samples/s, others' share, summary, step records).
    With a list as `log`, the run prints its log and its lines are added to the list."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [program, "train", *options, "--threads", str(threads), "--eval-strategy", "no",
               "--save-strategy", "no", "--device", "cpu", "--output-dir", out] + (["--quiet"] if log is None else [])
        d = Disturbance()
        d.start()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        others = d.stop()
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        steps = step_records(out)
        if summary.get("status") != "completed":
            raise RuntimeError(f"{' '.join(cmd)}: {summary.get('status')} after {len(steps)} steps")
        if any(not math.isfinite(s["loss"]) for s in steps):
            raise RuntimeError(f"{' '.join(cmd)}: a step's loss is not finite")
        if log is not None:
            log.extend(done.stdout.splitlines())
        return rate_after_warmup(steps), others, summary, steps
# SPDX-License-Identifier: GPL-3.0-or-later
