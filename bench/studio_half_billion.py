#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether the studio stays responsive while a half-billion-parameter model trains.

    bench/studio_half_billion.py BUILD [--output FILE] [--picture PNG] [--screenshot-at-point N]

BUILD is a build folder with app/accum-studio and app/accum-run (build-libtorch2). The
model is bench/checkpoint_bench.py half's: a Qwen2-style causal LM of about 0.5 B
parameters made from a config. The studio opens it as a user would (Model: from file,
the tensors data set, trainer style, AdamW, 2 × 2, 4 updates, a checkpoint every 2) from
a configuration file, under Xvfb at 1280 × 720, from a fresh settings and home folder,
and trains it (--autorun). Its hidden --event-loop-probe option records, for a 10 ms
timer on the window's thread, when each tick came: a tick's lateness is its gap less
10 ms, which is how long a click or a repaint would have waited. The reference is the
same studio sitting idle with the same configuration for 20 s. The studio grabs the
window (PNG) once the loss plot has N micro-batch points, while the run goes on; the
studio's peak RSS is the kernel's ru_maxrss. Writes FILE (bench/STUDIO_HALF_BILLION.md)
with the date and the command.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkpoint_bench  # noqa: E402

GIB = float(1 << 30)
SCREEN = "1280x720"


def studio(build, home, options):
    """accum-studio under its own Xvfb screen, from `home` (settings, runs): (exit code, output, wall s, peak RSS)."""
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home, XDG_RUNTIME_DIR=home,
               ACCUM_RUN_PROGRAM=os.path.join(build, "app", "accum-run"))
    env.pop("XDG_DATA_HOME", None)
    env.pop("QT_QPA_PLATFORM", None)  # the xcb platform, on Xvfb's screen
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 %sx24" % SCREEN, os.path.join(build, "app", "accum-studio")] + options
    code, out, wall, peak, _ = checkpoint_bench.measured(cmd, env=env)
    return code, out, wall, peak


def lateness(probe, begin, end):
    """Each tick's lateness (ms) with begin <= its time <= end, and the ticks themselves."""
    ticks = [(t, gap) for t, gap in probe["ticks"] if begin <= t <= end]
    return [gap - probe["interval_ms"] for _, gap in ticks], ticks


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(name, late):
    return "| %s | %d | %d ms | %d ms | %d ms | %d ms | %d | %d |" % (
        name, len(late), statistics.median(late), quantile(late, 0.99), quantile(late, 0.999), max(late),
        sum(1 for v in late if v > 100), sum(1 for v in late if v > 250))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--output", default=os.path.join(HERE, "STUDIO_HALF_BILLION.md"))
    ap.add_argument("--picture", default=None, help="where the screenshot goes (default: beside --output)")
    ap.add_argument("--screenshot-at-point", type=int, default=6,
                    help="grab once the loss plot has N micro-batch points (default 6: update 3, after a checkpoint)")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    picture = os.path.abspath(args.picture or os.path.join(os.path.dirname(args.output), "studio_half_billion.png"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ACCUM_MAKER_PYTHON", sys.executable)
    work = tempfile.mkdtemp(prefix="studio-half-", dir=args.workdir)
    try:
        model, data, _, _ = checkpoint_bench.make_half(work)
        config = os.path.join(work, "half.json")
        run_dir = os.path.join(work, "studio-run")
        with open(config, "w") as f:
            json.dump({"model": model, "dataset": "tensors", "data": data, "mode": "trainer", "batch-size": 2,
                       "accumulation-steps": 2, "max-steps": 4, "optimizer": "adamw", "lr": 1e-5,
                       "eval-strategy": "no", "save-strategy": "steps", "save-steps": 2, "logging-steps": 1,
                       "device": "cpu", "output-dir": run_dir}, f)
        results = {}
        for case, extra in (("idle", ["--screenshot-after", "20000"]),
                            ("training", ["--autorun", "--quit-after-run", "--screenshot", picture,
                                          "--screenshot-at-point", str(args.screenshot_at_point)])):
            home = os.path.join(work, "home-" + case)
            os.makedirs(home, mode=0o700)
            probe = os.path.join(work, case + ".json")
            shutil.rmtree(run_dir, ignore_errors=True)
            checkpoint_bench.wait_for_memory()
            code, out, wall, peak = studio(build, home, ["--config", config, "--event-loop-probe", probe] + extra)
            if code != 0 or not os.path.isfile(probe):
                sys.exit("accum-studio (%s) exited %d:\n%s" % (case, code, out[-3000:]))
            with open(probe) as f:
                results[case] = (json.load(f), wall, peak, out)
            print(case, "wall %.1f s, peak RSS %.2f GiB" % (wall, peak / GIB), flush=True)
        idle_probe = results["idle"][0]
        idle, _ = lateness(idle_probe, 2000, 10 ** 9)  # after the window's first paint
        probe, wall, peak, out = results["training"]
        marks = probe["marks"]
        if "run_finished" not in marks or "start" not in marks:
            sys.exit("the studio's run did not start and finish (marks %s):\n%s" % (marks, out[-3000:]))
        late, ticks = lateness(probe, marks["start"], marks["run_finished"])
        shot = (marks.get("screenshot", -1), marks.get("screenshot_saved", -1))
        # The grab itself runs on the window's thread: its ticks are reported apart.
        outside = [v for (t, gap), v in zip(ticks, late) if not (t >= shot[0] and t - gap <= shot[1])]
        runs = [os.path.join(d, "metrics.jsonl") for d, _, files in os.walk(run_dir) if "metrics.jsonl" in files]
        if len(runs) != 1:
            sys.exit("the studio's run folder %s holds %d metrics.jsonl" % (run_dir, len(runs)))
        with open(runs[0]) as f:
            records = [json.loads(line) for line in f]
        steps = [r for r in records if r.get("type") == "step"]
        summary = [r for r in records if r.get("type") == "summary"]
        worst = sorted(ticks, key=lambda tg: -tg[1])[:5]
        lines = [
            "# The studio while a half-billion-parameter model trains (%s)" % datetime.date.today().isoformat(), "",
            "Command: `bench/studio_half_billion.py %s`, on this machine (2 cores, 24 GiB, CPU). The model: "
            "bench/checkpoint_bench.py half's (a Qwen2-style causal LM of about 0.5 B parameters from a config). "
            "The studio (`accum-studio --config FILE --autorun`, Xvfb at %s, a fresh settings folder) trains it "
            "in the trainer style, AdamW, 2 × 2, 4 updates, a checkpoint every 2, in its own process; its "
            "hidden `--event-loop-probe` records when a 10 ms timer on the window's thread fired. Lateness: "
            "a tick's gap less 10 ms, i.e. how long a click or a repaint waited. The reference: the same "
            "studio idle for 20 s (after its first 2 s)." % (" ".join(sys.argv[1:]), SCREEN), "",
            "| window's thread | ticks | median lateness | 99 % | 99.9 % | worst | over 100 ms | over 250 ms |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            row("idle (reference)", idle),
            row("training, from Start to the run's end", late),
            row("… less the screenshot's own grab", outside), "",
            "The run: %s; %d updates, losses %s; wall time in the studio %.1f s (start to the run's end %.1f s); "
            "the studio's peak RSS %.2f GiB. The loss plot's first point came %.1f s after Start (the module read, "
            "the first micro-batch); the screenshot (%s, at the loss plot's micro-batch point %d) "
            "was grabbed %.1f s after Start and took %d ms on the window's thread. "
            "The five longest gaps (ms after Start, gap): %s." % (
                summary[-1]["status"] if summary else "no summary", len(steps), [r["loss"] for r in steps], wall,
                (marks["run_finished"] - marks["start"]) / 1000.0, peak / GIB,
                (marks.get("first_point", -1) - marks["start"]) / 1000.0, os.path.basename(picture),
                args.screenshot_at_point,
                (shot[0] - marks["start"]) / 1000.0, shot[1] - shot[0],
                ", ".join("%d: %d" % (t - gap - marks["start"], gap) for t, gap in worst))]
        with open(args.output, "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines))
        print("written:", args.output, picture)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
