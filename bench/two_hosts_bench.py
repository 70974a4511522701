#!/usr/bin/env python3
"""Where no_sync pays: accum-run on two hosts (scripts/two-hosts.sh: two network
namespaces joined by one veth link, shaped by tc's tbf) against eager PyTorch
DDP (torch 2.11, Gloo, bench/dp_reference.py), one rank per host, micro-batch
64 × K 4 per rank, one thread per rank, at 100 Mbit/s, 1 Gbit/s, 10 Gbit/s and
unshaped. For each model and link rate the variants alternate, their order
rotating from round to round:

  engine 2 hosts no_sync · engine 2 hosts sync every micro-batch ·
  eager DDP 2 hosts no_sync · eager DDP 2 hosts sync every micro-batch

and, on no link at all, engine 1 process, two independent engine 1-process runs
side by side (the ceiling of 2 processes on this machine) and eager 1 process.
Each rate's throughput is measured on the link itself (a TCP stream, host 0 to
host 1). From each engine run's own records: the update time T (2 × 64 × 4 /
samples/s) and the sync time S (allreduce_seconds per update, the no_sync
run's one all-reduce), and what they predict for no_sync / sync-each:
1 + (K − 1)·S/T. Writes bench/TWO_HOSTS_RESULTS.md and the studio's curve,
resources/lab/two_hosts_speedup.json (compiled into accum-studio).

    cmake --build build --target accum-run
    scripts/setup-libtorch2.sh          # the torch 2.11 environment (eager DDP)
    bench/two_hosts_bench.py [--rounds 3] [--models cnn,mlp]   # nothing else running: no build beside it

Needs root (network namespaces); says so and exits 77 otherwise. Not a test:
nothing here fails on a slow machine.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HARNESS = os.path.join(ROOT, "scripts", "two-hosts.sh")
sys.path.insert(0, HERE)
import cpu_quiet  # noqa: E402

BATCH, K, RANKS = 64, 4, 2
PORT = 29544
# name, and updates per run: on no link ("local"), and at each rate (each run a
# few seconds on this machine: the MLP's sync-each at 100 Mbit/s takes ~0.3 s an update)
MODELS = {"cnn": ("CNN", {"local": 20, "100mbit": 10, "1gbit": 20, "10gbit": 20, "none": 20}),
          "mlp": ("MLP", {"local": 600, "100mbit": 30, "1gbit": 150, "10gbit": 600, "none": 600})}
RATES = [("100mbit", "100 Mbit/s", 100), ("1gbit", "1 Gbit/s", 1000), ("10gbit", "10 Gbit/s", 10000),
         ("none", "unshaped", None)]
RUN_LIMIT = 240  # seconds one run may take


def log(*a):
    print(*a, flush=True)


def engine_options(model, steps, batch=BATCH):
    return ["--model", model, "--dataset", "fashion-mnist", "--batch-size", str(batch), "--accumulation-steps", str(K),
            "--max-steps", str(steps), "--threads", "1", "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9",
            "--eval-strategy", "no", "--save-strategy", "no", "--quiet"]


def engine_figures(out):
    summary = json.load(open(f"{out}/summary.json"))
    steps = [json.loads(l) for l in open(f"{out}/metrics.jsonl") if '"type":"step"' in l]
    n = max(1, len(steps))
    return {"sps": summary["samples_per_second"],
            "bytes": sum(s.get("allreduce_bytes", 0) for s in steps) / n,
            "allreduces": sum(s.get("grad_allreduces", 0) for s in steps) / n,
            "sync_s": sum(s.get("allreduce_seconds", 0.0) for s in steps) / n}


def both_hosts(net, commands, env=None):
    """Starts commands[0] in host 0 and commands[1] in host 1; both must exit 0."""
    env = dict(os.environ, GLOO_SOCKET_IFNAME=net["TWO_HOSTS_IF"], OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               **(env or {}))
    procs = [subprocess.Popen(["ip", "netns", "exec", net[f"TWO_HOSTS_NS{i}"]] + c, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i, c in enumerate(commands)]
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=RUN_LIMIT))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise RuntimeError(f"a run took more than {RUN_LIMIT} s: {commands}")
    for p, (o, e) in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {' '.join(p.args)}\n{e[-2000:]}")
    return outs


def engine_two_hosts(net, a, model, steps, sync_each):
    with tempfile.TemporaryDirectory() as out:
        cmds = []
        for node in (0, 1):
            cmd = [a.accum_run] + engine_options(model, steps) + [
                "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1", "--master-addr",
                net["TWO_HOSTS_ADDR0"], "--master-port", str(PORT), "--dist-timeout", "120",
                "--output-dir", out if node == 0 else out + "/host1"]
            if sync_each:
                cmd.append("--sync-each-micro-batch")
            cmds.append(cmd)
        both_hosts(net, cmds)
        return engine_figures(out)


def eager_two_hosts(net, a, model, steps, sync_each):
    cmds = []
    for rank in (0, 1):
        cmd = [a.python, f"{HERE}/dp_reference.py", "--model", model, "--nproc", "2", "--max-steps", str(steps),
               "--threads", "1", "--rank", str(rank), "--master-addr", net["TWO_HOSTS_ADDR0"],
               "--master-port", str(PORT + 1)]
        if sync_each:
            cmd.append("--sync-each-micro-batch")
        cmds.append(cmd)
    out, _ = both_hosts(net, cmds)[0]
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    return {"sps": json.loads(line)["samples_per_second"]}


def engine_local(a, model, steps, side_by_side=False):
    dirs = [tempfile.mkdtemp() for _ in range(2 if side_by_side else 1)]
    try:
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        procs = [subprocess.Popen([a.accum_run] + engine_options(model, steps) + ["--output-dir", d + "/o"],
                                  stdout=subprocess.DEVNULL, env=env) for d in dirs]
        for p in procs:
            if p.wait(timeout=RUN_LIMIT) != 0:
                raise RuntimeError(f"exit {p.returncode}: {' '.join(p.args)}")
        return {"sps": sum(engine_figures(d + "/o")["sps"] for d in dirs)}
    finally:
        for d in dirs:
            subprocess.run(["rm", "-rf", d])


def eager_local(a, model, steps):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([a.python, f"{HERE}/dp_reference.py", "--model", model, "--nproc", "1", "--max-steps",
                          str(steps), "--threads", "1"], check=True, capture_output=True, text=True, env=env,
                         timeout=RUN_LIMIT).stdout
    return {"sps": json.loads([l for l in out.splitlines() if l.startswith("{")][-1])["samples_per_second"]}


def link_throughput(net, megabytes):
    """Host 0 → host 1, one TCP stream of `megabytes`: Mbit/s as the receiver counts them."""
    server = ("import socket,time\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
              f"s.bind(('{net['TWO_HOSTS_ADDR1']}',{PORT + 2}));s.listen(1);s.settimeout(30)\n"
              "c,_=s.accept();c.settimeout(30);n=0;t=None\nwhile True:\n b=c.recv(1<<20)\n if not b: break\n"
              " t=t or time.perf_counter();n+=len(b)\nprint(n*8/(time.perf_counter()-t)/1e6)\n")
    client = ("import socket\nc=socket.create_connection(('%s',%d),timeout=30);b=b'x'*(1<<20)\n"
              "for _ in range(%d): c.sendall(b)\nc.close()\n" % (net["TWO_HOSTS_ADDR1"], PORT + 2, megabytes))
    srv = subprocess.Popen(["ip", "netns", "exec", net["TWO_HOSTS_NS1"], sys.executable, "-c", server],
                           stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    subprocess.run(["ip", "netns", "exec", net["TWO_HOSTS_NS0"], sys.executable, "-c", client], check=True, timeout=60)
    out, _ = srv.communicate(timeout=60)
    return float(out.strip())


def shape(net, rate):
    subprocess.run([HARNESS, "shape", net["TWO_HOSTS_NAME"], rate, "0"], check=True, timeout=30)


LINK_VARIANTS = [
    ("e2", "engine, 2 hosts (no_sync)", lambda net, a, m, s: engine_two_hosts(net, a, m, s, False)),
    ("e2s", "engine, 2 hosts, sync every micro-batch", lambda net, a, m, s: engine_two_hosts(net, a, m, s, True)),
    ("p2", "eager DDP, 2 hosts (no_sync)", lambda net, a, m, s: eager_two_hosts(net, a, m, s, False)),
    ("p2s", "eager DDP, 2 hosts, sync every micro-batch", lambda net, a, m, s: eager_two_hosts(net, a, m, s, True)),
]
LOCAL_VARIANTS = [
    ("e1", "engine, 1 process", lambda a, m, s: engine_local(a, m, s)),
    ("e1x2", "engine, 2 independent 1-process runs side by side (no communication)",
     lambda a, m, s: engine_local(a, m, s, side_by_side=True)),
    ("p1", "eager, 1 process", lambda a, m, s: eager_local(a, m, s)),
]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def arithmetic(e2, e2s):
    """T, S and the prediction from the no_sync runs' own figures (medians), and what was measured."""
    sps = med([r["sps"] for r in e2])
    t = RANKS * BATCH * K / sps
    s = med([r["sync_s"] for r in e2])
    s_each = med([r["sync_s"] for r in e2s])
    return {"T_ms": t * 1e3, "S_ms": s * 1e3, "S_each_ms": s_each * 1e3, "predicted": 1 + (K - 1) * s / t,
            "measured": sps / med([r["sps"] for r in e2s]),
            "allreduces": med([r["allreduces"] for r in e2]), "allreduces_each": med([r["allreduces"] for r in e2s])}


def inside(a):
    net = {k: v for k, v in os.environ.items() if k.startswith("TWO_HOSTS_")}
    start = time.time()
    quiet_before = cpu_quiet.cpu_idle(2.0)
    log(f"others kept {(1 - quiet_before) * os.cpu_count():.2f} cores busy before the benchmark (2 s)")
    links = {}
    for rate, label, _ in RATES:
        if rate in a.rates:
            shape(net, rate)
            links[rate] = link_throughput(net, 12 if rate == "100mbit" else 200)
            log(f"link {label}: {links[rate]:,.0f} Mbit/s measured")
    results = {}
    for model in a.models:
        name, counts = MODELS[model]
        steps_of = {k: max(4, int(n * a.scale)) for k, n in counts.items()}
        steps = steps_of["local"]
        local = {k: [] for k, _, _ in LOCAL_VARIANTS}
        link = {rate: {k: [] for k, _, _ in LINK_VARIANTS} for rate in a.rates}
        for r in range(a.rounds):
            order = LOCAL_VARIANTS[r % 3:] + LOCAL_VARIANTS[:r % 3]
            for key, label, run in order:
                local[key].append(run(a, model, steps))
                log(f"{name} round {r + 1}: {label}: {local[key][-1]['sps']:,.0f} samples/s")
            for rate, rlabel, _ in RATES:
                if rate not in a.rates:
                    continue
                shape(net, rate)
                order = LINK_VARIANTS[r % 4:] + LINK_VARIANTS[:r % 4]
                for key, label, run in order:
                    link[rate][key].append(run(net, a, model, steps_of[rate]))
                    f = link[rate][key][-1]
                    extra = f", sync {f['sync_s'] * 1e3:.1f} ms/update" if "sync_s" in f else ""
                    log(f"{name} round {r + 1} {rlabel}: {label}: {f['sps']:,.0f} samples/s{extra}")
        results[model] = {"steps": steps_of, "local": local, "link": link}
    quiet_after = cpu_quiet.cpu_idle(2.0)
    with open(a.raw, "w") as f:
        json.dump({"links": links, "results": results, "minutes": (time.time() - start) / 60,
                   "busy_before": (1 - quiet_before) * os.cpu_count(), "busy_after": (1 - quiet_after) * os.cpu_count(),
                   "load": os.getloadavg()[0]}, f)
    return 0


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def report(a, raw):
    links, results = raw["links"], raw["results"]
    avx512 = "avx512f" in open("/proc/cpuinfo").read()
    lines = [
        "# Two hosts: where no_sync pays",
        "",
        f"Generated by `{a.command}` on {datetime.date.today().isoformat()}: {platform.machine()}, "
        f"{os.cpu_count()} cores ({cpu_model()}, {'with' if avx512 else 'no'} AVX-512; the shared "
        f"machine's speed per core differs from day to day: compare the 'engine, 1 process' rows with "
        f"bench/DP_RESULTS.md's), {raw['minutes']:.1f} minutes. "
        f"Others kept {raw['busy_before']:.2f} cores busy before it and {raw['busy_after']:.2f} after "
        f"(bench/cpu_quiet.py, 2 s); it ran holding the build lock, so no build ran beside it.",
        "",
        "The two hosts are two network namespaces on this one machine joined by a veth link "
        "(`scripts/two-hosts.sh`), shaped by tc's tbf to each rate in both directions; no delay is added "
        "(this kernel has no netem). Each host runs one rank on one core of its own; the link's throughput "
        "is measured on it (one TCP stream, host 0 to host 1). So the network is real (TCP through two "
        "network stacks, a shaped queue) but the hosts share one memory bus and the kernel's time.",
        "",
        f"Micro-batch {BATCH} × K {K} per rank, one thread per rank, SGD with momentum, Fashion-MNIST. "
        "samples/s counts both ranks' samples over the training time; median of the rounds (min … max). "
        "Eager: torch 2.11's DistributedDataParallel on Gloo with model.no_sync() (bench/dp_reference.py), "
        "started one rank per host as torchrun's env:// would.",
        "",
        "| link | tbf rate | measured Mbit/s |",
        "|---|---:|---:|",
    ]
    for rate, label, mbit in RATES:
        if rate in links:
            lines.append(f"| {label} | {mbit or '—'} | {links[rate]:,.0f} |")
    lines.append("")
    curve = {}
    verdicts = []
    for model, res in results.items():
        name = MODELS[model][0]
        local, link = res["local"], res["link"]
        counts = ", ".join(f"{n} at {dict((r, l) for r, l, _ in RATES).get(k, 'no link')}"
                           for k, n in res["steps"].items())
        lines += [f"## {name} ({raw.get('rounds', a.rounds)} rounds; updates per run: {counts})", "",
                  "| variant | samples/s (median) | min … max |", "|---|---:|---:|"]
        for key, label, _ in LOCAL_VARIANTS:
            xs = [r["sps"] for r in local[key]]
            lines.append(f"| {label} | {med(xs):,.0f} | {min(xs):,.0f} … {max(xs):,.0f} |")
        lines += ["", "| link | engine no_sync | engine sync-each | no_sync / sync-each | all-reduces / update "
                  "(no_sync; sync-each) | T ms | S ms | predicted 1 + (K−1)·S/T | eager DDP no_sync | "
                  "eager sync-each | eager no_sync / sync-each | engine / eager (no_sync; sync-each) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        curve[model] = []
        for rate, label, mbit in RATES:
            if rate not in link:
                continue
            v = link[rate]
            ar = arithmetic(v["e2"], v["e2s"])
            e2, e2s = med([r["sps"] for r in v["e2"]]), med([r["sps"] for r in v["e2s"]])
            p2, p2s = med([r["sps"] for r in v["p2"]]), med([r["sps"] for r in v["p2s"]])
            lines.append(f"| {label} | {e2:,.0f} | {e2s:,.0f} | {e2 / e2s:.2f} × | {ar['allreduces']:g}; "
                         f"{ar['allreduces_each']:g} | {ar['T_ms']:.1f} | {ar['S_ms']:.1f} | {ar['predicted']:.2f} × | "
                         f"{p2:,.0f} | {p2s:,.0f} | {p2 / p2s:.2f} × | {e2 / p2:.2f} × ; {e2s / p2s:.2f} × |")
            curve[model].append({"rate": label, "tbf_mbit": mbit, "measured_mbit": round(links.get(rate, 0)),
                                 "engine": round(e2 / e2s, 3), "eager": round(p2 / p2s, 3),
                                 "predicted": round(ar["predicted"], 3), "T_ms": round(ar["T_ms"], 1),
                                 "S_ms": round(ar["S_ms"], 1)})
            verdicts.append((model, rate, label, e2 / p2, e2s / p2s))
        e1 = med([r["sps"] for r in local["e1"]])
        ceiling = med([r["sps"] for r in local["e1x2"]])
        lines += ["", "| ratio (medians) | value |", "|---|---:|"]
        lines.append(f"| 2 independent runs side by side / 1 process (the ceiling of 2 processes here) | "
                     f"{ceiling / e1:.2f} × |")
        for rate, label, _ in RATES:
            if rate in link:
                e2 = med([r["sps"] for r in link[rate]["e2"]])
                lines.append(f"| 2 hosts no_sync / 1 process, {label} | {e2 / e1:.2f} × "
                             f"({e2 / ceiling:.2f} of the ceiling) |")
        lines.append("")
        res["e1"], res["ceiling"] = e1, ceiling

    # The targets, from the figures above.
    lines += ["## Targets", ""]
    if "cnn" in results and "1gbit" in results["cnn"]["link"]:
        v = results["cnn"]["link"]["1gbit"]
        ar = arithmetic(v["e2"], v["e2s"])
        met = ar["measured"] >= 1.5
        per_sync = ar["S_each_ms"] / max(1.0, ar["allreduces_each"])
        compute = ar["T_ms"] - ar["S_ms"]
        lines.append(
            f"- **CNN no_sync / sync-each ≥ 1.5 × at 1 Gbit/s: {'met' if met else 'not met'}** — measured "
            f"{ar['measured']:.2f} ×. The no_sync run's update takes T = 2 × 64 × 4 / samples/s = {ar['T_ms']:.1f} ms, "
            f"of which S = {ar['S_ms']:.1f} ms in its one all-reduce (the wire and the wait for the other rank); "
            f"1 + (K−1)·S/T = 1 + {K - 1} × {ar['S_ms']:.1f} / {ar['T_ms']:.1f} = {ar['predicted']:.2f} ×. The "
            f"sync-each runs spent {ar['S_each_ms']:.1f} ms per update in {ar['allreduces_each']:g} all-reduces, "
            f"{per_sync:.1f} ms each: with those, (T − S + {ar['S_each_ms']:.1f}) / T = "
            f"({ar['T_ms']:.1f} − {ar['S_ms']:.1f} + {ar['S_each_ms']:.1f}) / {ar['T_ms']:.1f} = "
            f"{(compute + ar['S_each_ms']) / ar['T_ms']:.2f} × (measured {ar['measured']:.2f} ×)."
            + ("" if met else
               f" 1.5 × needs (K − 1) more all-reduces to add half an update: {K - 1} × s ≥ 0.5 × {ar['T_ms']:.1f} ms, "
               f"s ≥ {0.5 * ar['T_ms'] / (K - 1):.1f} ms each; one costs {per_sync:.1f} ms here (the CNN's 1.7 MB at "
               f"1 Gbit/s is 13.6 ms on the wire). The issue's ≈ 1.6 × assumed the 64 ms update of the faster "
               f"machine (1 + 3 × 13.6 / 64 = 1.64); this machine's update is {ar['T_ms']:.0f} ms, so the same "
               f"all-reduce weighs less. At 100 Mbit/s (S/T larger) the CNN's no_sync pays the multiple above."))
    worst = min(verdicts, key=lambda v: min(v[3], v[4])) if verdicts else None
    if worst:
        met = all(min(v[3], v[4]) >= 1.0 for v in verdicts)
        lines.append(f"- **engine ≥ 1.0 × eager DDP at every rate: {'met' if met else 'not met'}** — lowest "
                     f"{min(worst[3], worst[4]):.2f} × ({MODELS[worst[0]][0]}, {worst[2]}); every pair in the "
                     "tables' last column.")
        for model, rate, label, ratio, ratio_each in verdicts:
            if min(ratio, ratio_each) >= 1.0:
                continue
            v = results[model]["link"][rate]
            variant, key_e, key_p = ("sync-each", "e2s", "p2s") if ratio_each < ratio else ("no_sync", "e2", "p2")
            engine_ms = [RANKS * BATCH * K / r["sps"] * 1e3 for r in v[key_e]]
            eager_ms = [RANKS * BATCH * K / r["sps"] * 1e3 for r in v[key_p]]
            syncs = med([r["allreduces"] for r in v[key_e]])
            gap = med(engine_ms) - med(eager_ms)
            per_sync = med([r["sync_s"] for r in v[key_e]]) * 1e3 / max(syncs, 1)
            sync_bytes = med([r.get("bytes", 0) for r in v[key_e]]) / max(syncs, 1)
            wire = sync_bytes * 8 / (links[rate] * 1e6) * 1e3 if sync_bytes and links.get(rate) else 0
            lines.append(
                f"  - {MODELS[model][0]} at {label}, {variant}: an update takes {med(engine_ms):.1f} ms in the engine "
                f"(runs {min(engine_ms):.1f} … {max(engine_ms):.1f}) and {med(eager_ms):.1f} ms in eager DDP "
                f"({min(eager_ms):.1f} … {max(eager_ms):.1f}): {gap:.1f} ms ({gap / med(eager_ms):.1%}). "
                f"The link sets both: the engine's {syncs:g} all-reduces take {per_sync:.1f} ms each"
                + (f", against {wire:.1f} ms for their {sync_bytes / 1e6:.2f} MB at the measured "
                   f"{links[rate]:,.0f} Mbit/s (each rank sends its whole gradient once per all-reduce)" if wire else "")
                + f", so {syncs:g} of them are {syncs * per_sync / med(engine_ms):.0%} of the update.")
    if "none" in next(iter(results.values()))["link"]:
        for model, res in results.items():
            runs = [r["sps"] for r in res["link"]["none"]["e2"]]
            ceiling_runs = [r["sps"] for r in res["local"]["e1x2"]]
            e2 = med(runs)
            frac = e2 / res["ceiling"]
            ar = arithmetic(res["link"]["none"]["e2"], res["link"]["none"]["e2s"])
            lines.append(
                f"- **{MODELS[model][0]}: 2 hosts on the unshaped link ≥ 0.95 × the ceiling: "
                f"{'met' if frac >= 0.95 else 'not met'}** — {e2:,.0f} / {res['ceiling']:,.0f} samples/s "
                f"= {frac:.2f} (2 hosts / 1 process {e2 / res['e1']:.2f} ×, the ceiling "
                f"{res['ceiling'] / res['e1']:.2f} ×; the 2-host runs spread {min(runs):,.0f} … {max(runs):,.0f}, "
                f"the ceiling's {min(ceiling_runs):,.0f} … {max(ceiling_runs):,.0f})."
                + ("" if frac >= 0.95 else
                   f" Its update takes T = {ar['T_ms']:.1f} ms, of which S = {ar['S_ms']:.1f} ms in the all-reduce "
                   f"({ar['S_ms'] / ar['T_ms']:.0%}), which the computation does not overlap: 1 − S/T = "
                   f"{1 - ar['S_ms'] / ar['T_ms']:.2f} of the ceiling is what such updates leave. (The issue's 0.95 is "
                   f"the CNN's: 2 processes / 1 process against the ceiling in bench/DP_RESULTS.md, "
                   f"1.77 against 1.87 on 2026-12-01.)"))
    lines.append("")
    with open(a.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    log("\n".join(lines))
    doc = {"what": "no_sync / sync every micro-batch, samples/s, 2 hosts × 64 × 4",
           "measured": f"{datetime.date.today().isoformat()}, bench/two_hosts_bench.py",
           "link": "2 network namespaces, 1 veth link, tbf-shaped",
           "machine": f"{platform.machine()}, {os.cpu_count()} cores, {cpu_model()}",
           "models": curve}
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default="cnn,mlp")
    p.add_argument("--rates", default="100mbit,1gbit,10gbit,none")
    p.add_argument("--scale", type=float, default=1.0, help="× the updates per run (0.25 for a quick look)")
    p.add_argument("--python", help="the torch 2.11 python (default: scripts/setup-libtorch2.sh --python)")
    p.add_argument("--output", default=os.path.join(HERE, "TWO_HOSTS_RESULTS.md"))
    p.add_argument("--json", default=os.path.join(ROOT, "resources", "lab", "two_hosts_speedup.json"))
    p.add_argument("--raw", help=argparse.SUPPRESS)
    p.add_argument("--save-raw", help="also keep the measurements as JSON here (for --from-raw)")
    p.add_argument("--from-raw", help="no runs: the report from saved measurements, comma-separated files merged")
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    a.models = [m for m in a.models.split(",") if m]
    a.rates = [r for r in a.rates.split(",") if r]
    for m in a.models:
        if m not in MODELS:
            p.error(f"--models: {m} is not one of {', '.join(MODELS)}")
    for r in a.rates:
        if r not in [x[0] for x in RATES]:
            p.error(f"--rates: {r} is not one of {', '.join(x[0] for x in RATES)}")
    a.accum_run = os.path.join(os.path.abspath(a.build), "app", "accum-run")
    if not os.access(a.accum_run, os.X_OK):
        p.error(f"--build: no accum-run at {a.accum_run}")
    if not a.python:
        a.python = subprocess.run([os.path.join(ROOT, "scripts", "setup-libtorch2.sh"), "--python"], capture_output=True,
                                  text=True).stdout.strip()
    if not a.python or not os.access(a.python, os.X_OK):
        p.error("--python: no torch 2.11 python (run scripts/setup-libtorch2.sh)")
    if a.inside:
        return inside(a)
    # What was measured, without where this machine kept the files.
    shown = [f"--rounds {a.rounds}", f"--models {','.join(a.models)}"]
    if a.rates != [r for r, _, _ in RATES]:
        shown.append(f"--rates {','.join(a.rates)}")
    if a.scale != 1.0:
        shown.append(f"--scale {a.scale:g}")
    a.command = "bench/two_hosts_bench.py " + " ".join(shown)
    if a.from_raw:
        merged = None
        for path in a.from_raw.split(","):
            with open(path) as f:
                part = json.load(f)
            if merged is None:
                merged = part
                continue
            merged["results"].update(part["results"])
            merged["links"].update(part["links"])
            merged["minutes"] += part["minutes"]
            merged["busy_before"] = max(merged["busy_before"], part["busy_before"])
            merged["busy_after"] = max(merged["busy_after"], part["busy_after"])
            merged["commands"] = merged.get("commands", []) + part.get("commands", [])
        a.command = "; ".join(part_command for part_command in merged.get("commands", [])) or a.command
        report(a, merged)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw.json")
        cmd = [HARNESS, "with", "--name", f"tb{os.getpid() % 100000}", "--", sys.executable, os.path.abspath(__file__),
               "--inside", "--raw", raw] + sys.argv[1:] + ["--python", a.python]
        code = subprocess.run(cmd).returncode
        if code != 0:
            return code
        with open(raw) as f:
            measured = json.load(f)
        measured["commands"] = [a.command]
        measured["rounds"] = a.rounds
        if a.save_raw:
            with open(a.save_raw, "w") as f:
                json.dump(measured, f)
        report(a, measured)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: GPL-3.0-or-later
