#!/usr/bin/env python3
"""accum-run on two hosts joined by a real (if simulated) network: two network
namespaces and one veth link between them, made and removed by
scripts/two-hosts.sh. One rank per host (and 2 × 2 once), as a person would
start them on two machines:

    accum-run --nnodes 2 --node-rank R --master-addr <host 0> --master-port P …

with GLOO_SOCKET_IFNAME naming the link, as torch.distributed asks on a
machine with several interfaces.

    two_hosts.py correctness --accum-run PATH --work DIR
        2 hosts × 32 × 4 give one process × 64 × 4's step losses (1e-5) in each
        style (--mode pytorch, accelerator, trainer), one gradient all-reduce per
        update (K with --sync-each-micro-batch); 2 hosts × 2 processes × 16 × 4
        too; a checkpoint written on host 0 and --resume on both hosts continue
        with the uninterrupted run's losses.
    two_hosts.py faults --accum-run PATH --work DIR
        each fault in a network of its own, all at once: the link taken down,
        a partition, host 1's rank killed (-9), host 0's rank (the rendezvous'
        store) killed, host 1 started 20 s late (with --dist-timeout 10: both
        time out; with 40: it joins), host 1 with another --batch-size; the
        link taken down and the partition again at --dist-timeout 20 (cases
        "link-down-20", "partition-20"), since the bound must hold whatever the
        timeout. Every rank ends with its code (6, or 2 naming --batch-size)
        within --dist-timeout + 10 s of the fault (docs/distributed.md's bound,
        the program's contract), saying which rank and which host; the last
        checkpoint resumes on both hosts. Each host's end time is printed per
        case and timeout.

Each ends by checking that no namespace, link or process of its own is left,
and exits 77 (CTest's skip), saying why, where namespaces cannot be made (not
root, no veth or tc). Every wait is bounded. Where the 1e-5 comes from: the
engine's rule for data-parallel runs (ARCHITECTURE.md §2: N processes × B × K
give 1 process × N·B × K's losses to 1e-5, float32 summation order).
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HARNESS = os.path.join(ROOT, "scripts", "two-hosts.sh")
TOLERANCE = 1e-5  # ARCHITECTURE.md §2, data-parallel equivalence
K = 4
PORT = 29533  # every pair of hosts has its own network stacks: the same port in each is free
DIST_TIMEOUT = 10  # seconds, the faults' --dist-timeout (a case named "…-20" runs at 20 instead)
BOUND_SLACK = 10  # docs/distributed.md's bound: every rank ends within --dist-timeout + 10 s


def case_timeout(case):
    """A case and its --dist-timeout: "link-down-20" is the link-down case at 20 s."""
    kind, _, timeout = case.rpartition("-")
    return (kind, int(timeout)) if timeout.isdigit() else (case, DIST_TIMEOUT)


def log(*args):
    print(*args, flush=True)


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, what):
        log(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            self.items.append(what)
        return ok


# ---------------------------------------------------------------------------
# Runs


def base_options(model="mlp", steps=8, batch=64, mode="pytorch"):
    return ["--model", model, "--dataset", "fashion-mnist", "--batch-size", str(batch), "--accumulation-steps", str(K),
            "--max-steps", str(steps), "--threads", "1", "--lr", "0.05", "--optimizer", "sgd", "--momentum", "0.9",
            "--eval-strategy", "no", "--logging-steps", "1", "--mode", mode, "--quiet"]


def steps_of(out_dir):
    """The step records of a run's metrics.jsonl. Every complete line must be a
    record (a ValueError names the file, the line and why); a last line without
    its newline is one a killed rank was writing and is left out."""
    path = os.path.join(out_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.endswith("\n"):
                break
            try:
                record = json.loads(line)
            except ValueError as e:
                raise ValueError(f"{path}, line {number} is not a record: {e}: {line[:200]!r}") from None
            if record.get("type") == "step":
                rows.append(record)
    return rows


def summary_of(out_dir):
    try:
        with open(os.path.join(out_dir, "summary.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def compare_losses(fails, what, runs, reference, first_step=1):
    """Every step of `runs` (from first_step) against `reference`, both complete, no NaN."""
    got = [s for s in runs if s["step"] >= first_step]
    want = [s for s in reference if s["step"] >= first_step]
    if not fails.check(len(want) > 0 and [s["step"] for s in got] == [s["step"] for s in want],
                       f"{what}: steps {[s['step'] for s in got]} == reference's {[s['step'] for s in want]}"):
        return
    bad = [s["step"] for s in got + want if not math.isfinite(s["loss"])]
    if not fails.check(not bad, f"{what}: every loss finite (not at steps {bad})"):
        return
    worst = max(abs(a["loss"] - b["loss"]) for a, b in zip(got, want))
    fails.check(worst <= TOLERANCE, f"{what}: largest |Δ loss| {worst:.2e} ≤ {TOLERANCE:g} over {len(got)} steps")


def one_process(accum_run, out, options):
    """The reference: one process, on no network at all."""
    r = subprocess.run([accum_run] + options + ["--output-dir", out], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"the one-process reference exited {r.returncode}: {r.stderr[-2000:]}")
    return steps_of(out)


class Host:
    """One accum-run --nnodes 2 launcher in one namespace."""

    def __init__(self, net, node, accum_run, options, out, nproc=1, port=PORT, log_path=None):
        self.node = node
        self.out = out
        cmd = ["ip", "netns", "exec", net[f"TWO_HOSTS_NS{node}"], accum_run] + options + [
            "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", str(nproc),
            "--master-addr", net["TWO_HOSTS_ADDR0"], "--master-port", str(port), "--output-dir", out]
        env = dict(os.environ, GLOO_SOCKET_IFNAME=net["TWO_HOSTS_IF"])
        self.log_path = log_path or out + f".host{node}.log"
        self.log = open(self.log_path, "w")
        self.started = time.monotonic()
        # `ip netns exec` execs accum-run: self.proc.pid is host `node`'s launcher.
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.code = None
        self.ended = None
        # The moment it ends, whoever looks later (a case may be sleeping meanwhile).
        self._done = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self):
        self.proc.wait()
        self.ended = time.monotonic()
        self._done.set()

    def poll(self):
        if self.code is None and self._done.is_set():
            self.code = self.proc.returncode
        return self.code

    def wait(self, limit):
        self._done.wait(timeout=max(0.0, limit))
        return self.poll()

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._done.wait(timeout=10)
        self.poll()

    def text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def ranks(self):
        """The launcher's children: this host's rank processes."""
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2:].split()[1]) == self.proc.pid:
                out.append(int(pid))
        return out


def run_pair(net, accum_run, options, out, nproc=1, limit=120, options1=None, delay1=0.0):
    """Both hosts, to their end (bounded); returns (host0, host1)."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    h0 = Host(net, 0, accum_run, options, out, nproc)
    if delay1:
        time.sleep(delay1)  # not-a-wait: host 1 starts late on purpose, the case's stimulus
    h1 = Host(net, 1, accum_run, options1 or options, out + "-host1", nproc)
    deadline = time.monotonic() + limit
    for h in (h0, h1):
        h.wait(max(0.1, deadline - time.monotonic()))
    for h in (h0, h1):
        if h.code is None:
            h.kill()
            h.code = "killed after %d s" % limit
    return h0, h1


def harness(*args):
    return subprocess.run([HARNESS] + list(args), capture_output=True, text=True, timeout=60)


# ---------------------------------------------------------------------------
# Correctness


def correctness(args, net):
    fails = Failures()
    work = args.work
    a = args.accum_run
    steps = 8
    for mode in ("pytorch", "accelerator", "trainer"):
        ref = one_process(a, f"{work}/{mode}-one", base_options(steps=steps, mode=mode) + ["--save-strategy", "no"])
        for sync_each in (False, True):
            name = f"{mode}{'-sync-each' if sync_each else ''}"
            opts = base_options(steps=steps, batch=32, mode=mode) + ["--save-strategy", "no", "--dist-timeout", "30"]
            if sync_each:
                opts.append("--sync-each-micro-batch")
            t0 = time.monotonic()
            h0, h1 = run_pair(net, a, opts, f"{work}/{name}")
            took = time.monotonic() - t0
            if not fails.check(h0.code == 0 and h1.code == 0,
                               f"{name}: 2 hosts × 32 × {K} both exit 0 (got {h0.code}, {h1.code}; {took:.1f} s)"):
                log(h0.text()[-1500:], h1.text()[-1500:])
                continue
            got = steps_of(h0.out)
            compare_losses(fails, f"{name}: 2 hosts × 32 × {K} against 1 process × 64 × {K}", got, ref)
            want = K if sync_each else 1
            counts = sorted({s["grad_allreduces"] for s in got})
            fails.check(counts == [want], f"{name}: gradient all-reduces per update {counts} == [{want}]")

    # 2 hosts × 2 processes × 16 × K
    ref = one_process(a, f"{work}/two-by-two-one", base_options(steps=steps) + ["--save-strategy", "no"])
    opts = base_options(steps=steps, batch=16) + ["--save-strategy", "no", "--dist-timeout", "30"]
    h0, h1 = run_pair(net, a, opts, f"{work}/two-by-two", nproc=2)
    if fails.check(h0.code == 0 and h1.code == 0, f"2 hosts × 2 processes × 16 × {K}: exit 0 (got {h0.code}, {h1.code})"):
        got = steps_of(h0.out)
        compare_losses(fails, f"2 hosts × 2 processes × 16 × {K} against 1 process × 64 × {K}", got, ref)
        fails.check(sorted({s["grad_allreduces"] for s in got}) == [1], "2 × 2: one gradient all-reduce per update")
    else:
        log(h0.text()[-1500:], h1.text()[-1500:])

    # Checkpoint on host 0, --resume on both: the uninterrupted run's losses.
    for mode in ("pytorch", "trainer"):
        opts = base_options(steps=steps, batch=32, mode=mode) + ["--dist-timeout", "30", "--save-strategy", "steps",
                                                                  "--save-steps", "4"]
        full = f"{work}/{mode}-saved"
        h0, h1 = run_pair(net, a, opts, full)
        if not fails.check(h0.code == 0 and h1.code == 0, f"{mode}: run saving every 4 steps exits 0 on both hosts"):
            log(h0.text()[-1500:], h1.text()[-1500:])
            continue
        ckpt = os.path.join(full, "checkpoint-4")
        fails.check(os.path.exists(os.path.join(ckpt, "model.safetensors")), f"{mode}: host 0 wrote {ckpt}")
        fails.check(not os.path.exists(os.path.join(full + "-host1", "checkpoint-4")), f"{mode}: host 1 wrote no checkpoint")
        # Both hosts name the same checkpoint: --resume is one of the options
        # every rank must share (on two machines: a copy at the same path, or
        # shared storage; here the namespaces share this machine's disk).
        resumed = f"{work}/{mode}-resumed"
        h0 = Host(net, 0, a, opts + ["--resume", ckpt], resumed)
        h1 = Host(net, 1, a, opts + ["--resume", ckpt], resumed + "-host1")
        for h in (h0, h1):
            if h.wait(120) is None:
                h.kill()
        if fails.check(h0.code == 0 and h1.code == 0, f"{mode}: --resume on both hosts exits 0 (got {h0.code}, {h1.code})"):
            compare_losses(fails, f"{mode}: resumed steps 5 … 8 against the uninterrupted run", steps_of(resumed),
                           steps_of(full), first_step=5)
        else:
            log(h0.text()[-1500:], h1.text()[-1500:])
    return fails


# ---------------------------------------------------------------------------
# Faults: each case runs inside a network of its own (`two-hosts.sh with`) and
# writes its findings as JSON.

def names_rank_and_host(text, net):
    """The failure message names a rank and a host (one of the two addresses)."""
    rank = re.search(r"\brank \d", text) is not None
    host = net["TWO_HOSTS_ADDR0"] in text or net["TWO_HOSTS_ADDR1"] in text
    return rank and host


def error_lines(text):
    return [l for l in text.splitlines() if "accum-run:" in l or "rank " in l][:6]


def latest_checkpoint(out):
    best = -1
    if os.path.isdir(out):
        for d in os.listdir(out):
            m = re.fullmatch(r"checkpoint-(\d+)", d)
            if m and os.path.exists(os.path.join(out, d, "trainer_state.json")):
                best = max(best, int(m.group(1)))
    return best


def fault_case(case, args, net):
    a = args.accum_run
    out = f"{args.work}/{case}"
    case, dist_timeout = case_timeout(case)
    fault_bound = dist_timeout + BOUND_SLACK
    for old in (out, out + "-host1", out + "-resumed", out + "-resumed-host1"):
        shutil.rmtree(old, ignore_errors=True)
    os.makedirs(args.work, exist_ok=True)
    # A run long enough to be cut mid-way: teaching pace (10 ms after each
    # micro-batch), a checkpoint every 5 updates.
    long_run = base_options(steps=400, batch=32) + ["--dist-timeout", str(dist_timeout), "--save-strategy", "steps",
                                                    "--save-steps", "5", "--micro-step-delay", "0.01"]
    result = {"case": case, "dist_timeout": dist_timeout, "ok": True, "checks": []}

    def check(ok, what):
        result["checks"].append(("ok" if ok else "FAIL", what))
        if not ok:
            result["ok"] = False
        return ok

    def finished(h, since, want_code, bound, says=None, what=""):
        """Host h's end (waited for, bounded): its exit code, its time since `since`, its message."""
        # The end waited for until the documented bound (the program's contract,
        # docs/distributed.md), failing there; how long it took is only reported.
        ended = h.wait(since + bound - time.monotonic()) is not None
        took = (h.ended or time.monotonic()) - since
        if not ended:
            h.kill()
            h.code = "still running"
        text = h.text()
        result[f"host{h.node}"] = {"exit": h.code, "seconds": round(took, 1), "message": error_lines(text)}
        check(ended, f"host {h.node} ends within {bound} s of {what or 'the fault'}")
        check(h.code == want_code, f"host {h.node} exits {want_code} (got {h.code})")
        if says:
            check(says(text), f"host {h.node}'s message {says.__doc__}")

    def rank_and_host(text):
        """names a rank and a host"""
        return names_rank_and_host(text, net)

    def batch_size(text):
        """names --batch-size"""
        return "--batch-size" in text

    def resumes(before):
        """The last checkpoint is complete: both hosts resume from it and finish 3 more updates."""
        step = latest_checkpoint(out)
        if not check(step > 0, f"a checkpoint was written before the fault (checkpoint-{step})"):
            return
        check(step <= before, f"checkpoint-{step} is no later than the last step recorded")
        opts = base_options(steps=step + 3, batch=32) + ["--dist-timeout", "30", "--save-strategy", "no",
                                                          "--resume", os.path.join(out, f"checkpoint-{step}")]
        h0, h1 = run_pair(net, a, opts, out + "-resumed", limit=90)
        check(h0.code == 0 and h1.code == 0, f"--resume from checkpoint-{step} on both hosts exits 0 (got {h0.code}, {h1.code})")
        got = [s["step"] for s in steps_of(out + "-resumed")]
        check(got == list(range(step + 1, step + 4)), f"the resumed run records steps {got} == {step + 1} … {step + 3}")
        result["resumed_from"] = step

    def start_and_wait_for_checkpoint():
        h0 = Host(net, 0, a, long_run, out)
        h1 = Host(net, 1, a, long_run, out + "-host1")
        limit = time.monotonic() + 60
        while latest_checkpoint(out) < 10 and time.monotonic() < limit and h0.poll() is None and h1.poll() is None:
            time.sleep(0.1)  # not-a-wait: the period of a bounded poll for the checkpoint
        return h0, h1

    if case in ("link-down", "partition", "host1-killed", "host0-killed"):
        h0, h1 = start_and_wait_for_checkpoint()
        if not check(h0.poll() is None and h1.poll() is None and latest_checkpoint(out) >= 10,
                     "both hosts train and checkpoint-10 was written"):
            for h in (h0, h1):
                h.kill()
                result[f"host{h.node}"] = {"exit": h.code, "message": error_lines(h.text())}
            return result
        fault_at = time.monotonic()
        if case == "link-down":
            r = harness("link", net["TWO_HOSTS_NAME"], "down")
        elif case == "partition":
            r = harness("partition", net["TWO_HOSTS_NAME"], "on")
        else:
            h = h1 if case == "host1-killed" else h0
            pids = h.ranks()
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            r = subprocess.CompletedProcess([], 0 if pids else 1, "", "no rank process found")
        check(r.returncode == 0, f"fault made ({r.stderr.strip()})")
        for h in (h0, h1):
            finished(h, fault_at, 6, fault_bound, rank_and_host)
        last = max([s["step"] for s in steps_of(out)] or [0])
        if case == "link-down":
            harness("link", net["TWO_HOSTS_NAME"], "up")
        if case == "partition":
            harness("partition", net["TWO_HOSTS_NAME"], "off")
        resumes(last)
    elif case in ("late-timeout", "late-join"):
        timeout = dist_timeout if case == "late-timeout" else 40
        result["dist_timeout"] = timeout
        opts = base_options(steps=6, batch=32) + ["--dist-timeout", str(timeout), "--save-strategy", "no"]
        start = time.monotonic()
        h0 = Host(net, 0, a, opts, out)
        time.sleep(20)  # not-a-wait: host 1 starts 20 s late, the case itself
        h1 = Host(net, 1, a, opts, out + "-host1")
        if case == "late-timeout":
            # Host 0 gives up waiting; host 1, started after, finds nobody and gives up after its own timeout.
            for h, since in ((h0, start), (h1, h1.started)):
                finished(h, since, 6, timeout + 10, rank_and_host, "its start")
        else:
            for h in (h0, h1):
                if h.wait(max(0.1, start + 90 - time.monotonic())) is None:
                    h.kill()
                result[f"host{h.node}"] = {"exit": h.code, "seconds": round((h.ended or time.monotonic()) - h.started, 1),
                                           "message": error_lines(h.text())}
            check(h0.code == 0 and h1.code == 0, f"host 1, 20 s late within --dist-timeout 40, joins: both exit 0 "
                                                 f"(got {h0.code}, {h1.code})")
            check([s["step"] for s in steps_of(out)] == list(range(1, 7)), "the run recorded steps 1 … 6")
    elif case == "batch-size":
        opts = base_options(steps=6, batch=32) + ["--dist-timeout", str(dist_timeout), "--save-strategy", "no"]
        other = base_options(steps=6, batch=16) + ["--dist-timeout", str(dist_timeout), "--save-strategy", "no"]
        start = time.monotonic()
        h0 = Host(net, 0, a, opts, out)
        h1 = Host(net, 1, a, other, out + "-host1")
        for h in (h0, h1):
            finished(h, start, 2, fault_bound, batch_size, "the start")
    else:
        raise ValueError(case)
    return result


# The cases bounded from their start first (their hosts start up before the others load the CPU).
# The link's faults run at a second --dist-timeout too: the bound holds whatever the timeout.
FAULT_CASES = ["late-timeout", "batch-size", "late-join", "link-down", "partition", "host1-killed", "host0-killed",
               "link-down-20", "partition-20"]


# ---------------------------------------------------------------------------
# Entry points


def our_processes(work):
    """Processes still running whose command line names this test's work directory."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if work in cmd and "two_hosts.py" not in cmd and "two-hosts.sh" not in cmd:
            left.append(f"{pid}: {cmd[:120]}")
    return left


def nothing_left(fails, names, work):
    for n in names:
        r = harness("leftovers", n)
        fails.check(r.returncode == 0, f"no namespace or link of hosts {n} left {r.stderr.strip()}")
    left = our_processes(work)
    fails.check(not left, f"no process of this test left {left}")


def inside(args):
    """Runs inside `two-hosts.sh with`: the environment names the hosts."""
    net = {k: os.environ[k] for k in os.environ if k.startswith("TWO_HOSTS_")}
    if args.command == "correctness":
        fails = correctness(args, net)
        return 1 if fails.items else 0
    result = fault_case(args.case, args, net)
    with open(os.path.join(args.work, f"{args.case}.json"), "w") as f:
        json.dump(result, f)
    return 0


def outside(args):
    r = subprocess.run([HARNESS, "check"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        log(f"SKIP: {r.stderr.strip() or 'two-hosts.sh check failed'}")
        return 77
    # A fresh work directory: what an earlier run left (its runs, its logs) is not this run's.
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    me = [sys.executable, os.path.abspath(__file__), "--inside", "--accum-run", args.accum_run, "--work", args.work]
    fails = Failures()
    start = time.monotonic()
    # Every child ends within its bound; this one, if interrupted, passes the signal on
    # (each `two-hosts.sh with` then removes its hosts).
    children = []

    def on_signal(sig, _frame):
        for c in children:
            if c.poll() is None:
                c.send_signal(signal.SIGTERM)
        for c in children:
            try:
                c.wait(timeout=15)
            except subprocess.TimeoutExpired:
                c.kill()
        sys.exit(128 + sig)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    base = f"th{os.getpid() % 100000}"
    if args.command == "correctness":
        names = [base]
        c = subprocess.Popen([HARNESS, "with", "--name", base, "--"] + me + ["correctness"])
        children.append(c)
        try:
            code = c.wait(timeout=args.limit)
        except subprocess.TimeoutExpired:
            on_signal(signal.SIGTERM, None)
        fails.check(code == 0, f"2-host correctness (exit {code})")
    else:
        names = [f"{base}f{i}" for i in range(len(FAULT_CASES))]
        for i, (name, case) in enumerate(zip(names, FAULT_CASES)):
            # A second apart: fourteen accum-runs loading LibTorch at once on two cores
            # would spend the faults' time bounds on starting up.
            if i:
                time.sleep(1)  # not-a-wait: starts spread out, nothing is waited for
            children.append(subprocess.Popen([HARNESS, "with", "--name", name, "--"] + me + ["faults", "--case", case],
                                             stdout=open(os.path.join(args.work, f"{case}.log"), "w"),
                                             stderr=subprocess.STDOUT))
        deadline = time.monotonic() + args.limit
        for case, c in zip(FAULT_CASES, children):
            try:
                code = c.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                c.terminate()
                code = c.wait(timeout=30)
            path = os.path.join(args.work, f"{case}.json")
            if not fails.check(code == 0 and os.path.exists(path), f"{case}: the case ran (exit {code})"):
                with open(os.path.join(args.work, f"{case}.log")) as f:
                    log(f.read()[-3000:])
                continue
            with open(path) as f:
                result = json.load(f)
            log(f"--- {case}")
            for h in ("host0", "host1"):
                if h in result:
                    info = result[h]
                    log(f"    {h}: exit {info.get('exit')} after {info.get('seconds')} s "
                        f"(--dist-timeout {result.get('dist_timeout')})")
                    for line in info.get("message", []):
                        log(f"        {line}")
            for status, what in result["checks"]:
                fails.check(status == "ok", f"{case}: {what}")
    nothing_left(fails, names, args.work)
    log(f"{len(fails.items)} failed; {time.monotonic() - start:.0f} s")
    return 1 if fails.items else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["correctness", "faults"])
    p.add_argument("--accum-run", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--case", choices=FAULT_CASES)
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--limit", type=float, default=200, help="seconds the whole test may take (default 200)")
    args = p.parse_args()
    args.work = os.path.abspath(args.work)
    args.accum_run = os.path.abspath(args.accum_run)
    if not os.access(args.accum_run, os.X_OK):
        print(f"two_hosts.py: --accum-run {args.accum_run} is not an executable", file=sys.stderr)
        return 2
    return inside(args) if args.inside else outside(args)


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: GPL-3.0-or-later
