"""Waiting for a shared machine's CPUs to be quiet before a measurement (Linux /proc/stat)."""
import time


def cpu_sample():
    """(idle + iowait, total) clock ticks so far, summed over all CPUs."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return values[3] + values[4], sum(values)


def cpu_idle(seconds=2.0):
    """The fraction of all CPUs' time that was idle over the next `seconds`."""
    idle0, total0 = cpu_sample()
    time.sleep(seconds)
    idle1, total1 = cpu_sample()
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_for_idle(threshold, limit_s=600):
    """Waits (up to limit_s) until the CPUs were at least `threshold` idle over two
    seconds; returns the idle fraction found last."""
    start = time.monotonic()
    idle = cpu_idle()
    while idle < threshold and time.monotonic() - start < limit_s:
        idle = cpu_idle()
    return idle
# SPDX-License-Identifier: GPL-3.0-or-later
