#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""No test synchronises by time, and none asserts a wall-clock bound (docs/testing.md).

    check_waits.py ROOT        the tests under ROOT/tests: exit 0, or 1 naming each line
    check_waits.py --self-test the patterns against lines they must and must not find

A time-based wait is a sleep (sleep_for, msleep, usleep, QTest::qWait, time.sleep,
a shell `sleep`). A test waits on the event instead: QTRY_*, QSignalSpy::wait,
QTest::qWaitFor, a condition variable's wait_for with a predicate, or
testing::wait_until (tests/engine/wait_until.h), each bounded and failing at its
deadline. A sleep that synchronises nothing (a stand-in for work, the moment a
stimulus comes, a poll's period) says so on its line or the line above with
`not-a-wait:` and its reason.

A wall-clock assertion is a check (QVERIFY, QCOMPARE, assert, `return fail`) of a
measured time: elapsed(), seconds_since(), a `took` or a `latency`, a difference
of clock readings. Such figures are bench/ commands' (bench/latencies.py).
"""
import os
import re
import sys

SUFFIXES = (".cpp", ".h", ".py", ".sh", ".cmake")
MARKER = "not-a-wait:"
SELF = "tests/docs/check_waits.py"  # its self-test's lines are findings on purpose

SLEEPS = [
    re.compile(r"\bsleep_(for|until)\s*\("),
    re.compile(r"\b(msleep|usleep|nanosleep)\s*\("),
    re.compile(r"\bQThread::sleep\s*\("),
    re.compile(r"\bQTest::qWait\s*\("),
    re.compile(r"\bqWait\s*\("),
    re.compile(r"\btime\.sleep\s*\("),
    re.compile(r"(^|[;&|]\s*|\bthen\s+|\bdo\s+)sleep\s+[0-9.]"),
    re.compile(r"(^|[^\w.])sleep\s*\(\s*[0-9]"),
]
CHECK = re.compile(r"\b(QVERIFY2?|QCOMPARE|QTRY_\w+|Q_ASSERT|assert|fail)\b")
MEASURED = re.compile(
    r"\belapsed\s*\(\)|\bseconds_since\s*\(|\btook\b|\blatency\b|\bClock::now\s*\(\)\s*-|"
    r"steady_clock::now\s*\(\)\s*-|\btime\.(time|monotonic|perf_counter)\s*\(\)\s*-|\.seconds\s*<\s*[\w(]|"
    r"\"seconds\"\)\)\s*<")


def strip_comment(line, path):
    marker = "#" if path.endswith((".py", ".sh", ".cmake")) else "//"
    at = line.find(marker)
    return line if at < 0 else line[:at]


def findings(path, text):
    """(line number, what, text) of each time-based wait and wall-clock check in one file."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        code = strip_comment(line, path)
        if not code.strip():
            continue
        excused = MARKER in line or (i > 0 and MARKER in lines[i - 1])
        if not excused and any(p.search(code) for p in SLEEPS):
            out.append((i + 1, "a time-based wait", line.strip()))
        if CHECK.search(code) and MEASURED.search(code):
            out.append((i + 1, "a wall-clock check", line.strip()))
    return out


def test_files(root):
    base = os.path.join(root, "tests")
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in ("corpus", "__pycache__"))
        for name in sorted(files):
            if name.endswith(SUFFIXES) or name == "CMakeLists.txt":
                path = os.path.join(folder, name)
                yield os.path.relpath(path, root), path


def self_test():
    must = {
        "test.cpp": ["QTest::qWait(50);", "std::this_thread::sleep_for(std::chrono::milliseconds(20));",
                     "QThread::usleep(500);", "QVERIFY2(took < 15, \"x\");",
                     "QVERIFY(timer.elapsed() < 2000);", "QVERIFY(seconds_since(start) < 10);",
                     "QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));",
                     "QVERIFY(std::stod(o.fields.at(\"seconds\")) < 5);", "QVERIFY2(busy.seconds < 15, \"\");"],
        "test.py": ["time.sleep(0.1)", "assert time.monotonic() - start < 5"],
        "test.sh": ["sleep 1", "run && sleep 2"],
    }
    must_not = {
        "test.cpp": ["QVERIFY(QTest::qWaitForWindowExposed(&w));", "QTRY_VERIFY_WITH_TIMEOUT(done, 1000);",
                     "return QTest::qWaitFor([&] { return ok; });",
                     "std::this_thread::sleep_for(1s); // not-a-wait: busy until stopped",
                     "// QTest::qWait(50) was here", "if (c.seconds <= 0) return fail(\"counters\");", "std::printf(\"BENCH x %.2f s\", took);"],
        "test.py": ["print('%.1f s' % (time.time() - started))", "subprocess.run(cmd, timeout=60)"],
        "test.sh": ["echo asleep 1", "# sleep 1"],
    }
    bad = []
    for path, lines in must.items():
        for line in lines:
            if not findings(path, line):
                bad.append("missed: %s: %s" % (path, line))
    for path, lines in must_not.items():
        for line in lines:
            if findings(path, line):
                bad.append("found wrongly: %s: %s" % (path, line))
    for b in bad:
        print(b)
    print("self-test: %d lines, %d wrong" % (sum(map(len, must.values())) + sum(map(len, must_not.values())), len(bad)))
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    problems, files = [], 0
    for rel, path in test_files(root):
        if rel == SELF:
            continue
        files += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, what, line in findings(rel, f.read()):
                problems.append("%s:%d: %s: %s" % (rel, number, what, line))
    for p in problems:
        print(p)
    print("%d test files, %d problems" % (files, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
