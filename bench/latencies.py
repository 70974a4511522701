#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""How fast stops, failures and the studio's event loop are: the figures the tests print.

    bench/latencies.py BUILD [--rounds N] [--only NAME ...] [--output FILE]

BUILD is a build folder (build-libtorch2). The tests check that each of these things
happens (the stop is honoured, the failure is seen as a failure and not as a timeout, the
plot grows while the engine trains); how long it takes is measured here, on a machine left
quiet, against the bound the test suite used to assert. Each test function named below runs
on its own, N rounds; its `BENCH name value unit` lines are collected, and the table gives
the median and the worst of each figure beside its former bound. Exit 0 when every worst
figure is within its bound, 1 otherwise (a figure missing counts as over).
"""
import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_quiet  # noqa: E402

# (executable under BUILD, test function, {figure: (bound, unit, what)})
CASES = [
    ("tests/engine/test_styles", "stopFromAnotherThread",
     {"styles.stop": (1000, "ms", "a stop from another thread to run() returning")}),
    ("tests/ui/test_studio_window", "stopEndsTheRun",
     {"studio.stop": (1000, "ms", "the studio's Stop to run_finished")}),
    ("tests/ui/test_studio_window", "eventLoopKeepsTurning",
     {"studio.worst_event_loop_gap": (100, "ms", "the longest gap between 10 ms ticks while training (2 ms pace)")}),
    ("tests/ui/test_studio_window", "closingMidRunLeavesNoThread",
     {"studio.close_mid_run": (2000, "ms", "closing the window mid-run, engine thread joined")}),
    ("tests/engine/test_data_parallel", "killedRankThenResume",
     {"data_parallel.killed_rank_noticed": (20, "s", "kill -9 of rank 1 to the launcher's exit 6")}),
    ("tests/engine/test_data_parallel", "failureBeforeTheRendezvousIsSeenFast",
     {"data_parallel.failure_before_rendezvous": (15, "s", "a rank failing before the rendezvous to the other's exit")}),
    ("tests/engine/test_data_parallel", "sessionStopEndsWorkers",
     {"data_parallel.session_stop": (10, "s", "the studio's stop of 2 ranks to run() returning")}),
    ("tests/engine/test_data_parallel", "sessionStopWithStalledRank",
     {"data_parallel.stop_with_stalled_rank": (15, "s", "the same with rank 1 stopped (SIGSTOP)")}),
    ("tests/engine/test_data_parallel", "failedJoinsLeaveNoThread",
     {"data_parallel.failed_join": (10, "s", "a worker that exits at once to rank 0's error")}),
    ("tests/engine/test_distributed", "killedPeerSurfacesAsTypedError",
     {"distributed.peer_lost": (20, "s", "kill -9 of a peer to a survivor's error")}),
    ("tests/engine/test_distributed", "stalledPeerIsATimeout",
     {"distributed.stalled_peer": (12, "s", "a peer stopped (SIGSTOP), --dist-timeout 2, to the survivor's error")}),
    ("tests/engine/test_distributed", "portInUseIsAClearError",
     {"distributed.port_in_use": (5, "s", "a taken port to the rank's error")}),
    ("tests/engine/test_distributed", "silentMasterEndsWithinTheTimeout",
     {"distributed.silent_master": (11, "s", "a silent master, --dist-timeout 1, to the rank's error")}),
    ("tests/engine/test_distributed", "noMasterListeningEndsWithinTheTimeout",
     {"distributed.no_master": (11, "s", "no master listening, --dist-timeout 1, to the rank's error")}),
    ("tests/engine/test_distributed", "missingRankIsNamed",
     {"distributed.missing_rank": (11, "s", "ranks that never come, --dist-timeout 1, to rank 0's error")}),
    ("tests/engine/test_distributed", "failedGroupsLeaveNoThread",
     {"distributed.destroy_failed_group": (1, "s", "destroying a failed group, on the caller's thread")}),
]
LINE = re.compile(r"^BENCH (\S+) ([0-9.eE+-]+) (\S+)$")


def run_case(build, exe, function):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ACCUM_ADAPTIVE_THREADS="0")
    p = subprocess.run([os.path.join(build, exe), function], capture_output=True, text=True, env=env, timeout=900)
    figures = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line.strip())
        if m:
            figures.setdefault(m.group(1), []).append(float(m.group(2)))
    return p.returncode, figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="test functions to run (all by default)")
    parser.add_argument("--output", help="write the table here too")
    parser.add_argument("--idle", type=float, default=0.8, help="wait for the CPUs to be this idle first")
    a = parser.parse_args()
    seen = {}
    failed = []
    idle = cpu_quiet.wait_for_idle(a.idle)
    for _ in range(a.rounds):
        for exe, function, _figures in CASES:
            if a.only and function not in a.only:
                continue
            code, figures = run_case(a.build, exe, function)
            if code != 0:
                failed.append("%s %s: exit %d" % (exe, function, code))
            for name, values in figures.items():
                seen.setdefault(name, []).extend(values)
    rows = ["| figure | what | median | worst | former bound |", "|---|---|---|---|---|"]
    over = []
    for exe, function, figures in CASES:
        if a.only and function not in a.only:
            continue
        for name, (bound, unit, what) in figures.items():
            values = seen.get(name, [])
            if not values:
                rows.append("| `%s` | %s | – | – | %s %s |" % (name, what, bound, unit))
                over.append(name + ": no figure")
                continue
            worst = max(values)
            rows.append("| `%s` | %s | %.3g %s | %.3g %s | %s %s |" % (name, what, statistics.median(values), unit,
                                                                    worst, unit, bound, unit))
            if worst > bound:
                over.append("%s: %.3g %s > %s %s" % (name, worst, unit, bound, unit))
    head = "%s, %s, %d CPUs (%.0f %% idle before), %d rounds" % (
        datetime.date.today().isoformat(), platform.machine(), os.cpu_count(), 100 * idle, a.rounds)
    command = "bench/latencies.py " + " ".join(sys.argv[1:])
    title = "# How long stops, failures and the studio's event loop take"
    text = "\n".join([title, "", head + ":", "", "    " + command, ""] + rows) + "\n"
    if failed:
        text += "\nTest functions that failed: " + "; ".join(failed) + "\n"
    if over:
        text += "\nOver the former bound: " + "; ".join(over) + "\n"
    print(text, end="")
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    return 1 if over or failed else 0


if __name__ == "__main__":
    sys.exit(main())
