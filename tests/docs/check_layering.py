#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The layering of docs/ARCHITECTURE.md checked against the code (Python 3, standard library).

    check_layering.py ROOT            the tree keeps the rules; exits 1 naming each break
    check_layering.py ROOT --breaks   a copy of the tree with one break of each rule added:
                                      exits 0 when every break is found (the check can fail)

Rules (ARCHITECTURE.md §1.3, §1.4):
  R1  no torch, ATen, c10 or caffe2 header in ui/, app/ or engine/include/accum/
  R2  no Qt header in engine/
  R3  the quoted includes between the parts of engine/src/ are exactly the include table of
      §1.3: every include the code has is one the table allows (a folder `x/`, one header
      `x/y.h`, or a top-level header `y.h`), every entry of the table is one the code uses,
      and the graph has no circle
  R4  no file but engine/src/torch_compat.h tests TORCH_VERSION
  R5  inside distributed/, no circle between its files: a file is x.h with x.cpp, and it uses
      another when either includes the other's header (the process group uses the rendezvous,
      which uses the store client, never the other way). Other folders have such pairs (a
      data set and its factory, a model and its TorchScript form): R5_FOLDERS names the
      folders held to it.
  R6  no code file of ui/, engine/ or app/ above CODE_LINES lines: one job a file
      (ARCHITECTURE.md §1.4, R10)
  R7  no test file (tests/: its code, Python and shell) above TEST_LINES lines: a test file is
      split by subject
A part is a folder of engine/src/ (`memory/`) or a file at its top (`session.cpp`,
`other_load.cpp` with its header). `accum/` (the public API) may be included by any part.
"""
import os
import re
import shutil
import sys
import tempfile

QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
ANGLED = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.MULTILINE)
TORCH_HEADER = re.compile(r"^(torch|ATen|c10|caffe2)/")
QT_HEADER = re.compile(r"^(Q[A-Za-z]+(/|$)|qcustomplot)")
SOURCE = (".cpp", ".h", ".inc", ".hpp", ".cu")


def sources(root, top, endings=SOURCE):
    base = os.path.join(root, top)
    for folder, _, names in os.walk(base):
        for name in sorted(names):
            if name.endswith(endings):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    yield os.path.relpath(path, root), f.read()


def part_of(relative):
    """engine/src/memory/x.cpp -> memory/ ; engine/src/session.cpp -> session.cpp"""
    inside = relative[len("engine/src/"):]
    if "/" in inside:
        return inside.split("/")[0] + "/"
    stem = os.path.splitext(inside)[0]
    return stem + ".cpp" if stem not in ("torch_compat", "switches", "pch") else inside


def target_of(include):
    return include.split("/")[0] + "/" if "/" in include else include


def table(root):
    """[(parts, allowed entries)], a row each, from the table under '### 1.3'."""
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    text = open(path, encoding="utf-8").read()
    section = text.split("### 1.3", 1)[1].split("\n### ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] == "folder" or set(cells[0]) <= {"-"}:
            continue
        # Remarks in parentheses name no include; the public accum/ is open to every part.
        parts = re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cells[0]))
        entries = {e for e in re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cells[1]))
                   if not e.startswith("accum/")}
        rows.append((parts, entries))
    return rows


def check(root):
    problems = []
    for top in ("ui", "app", "engine/include/accum"):
        for path, text in sources(root, top):
            for inc in ANGLED.findall(text) + QUOTED.findall(text):
                if TORCH_HEADER.match(inc):
                    problems.append(f"{path}: R1: includes the torch header <{inc}> outside the engine")
    for path, text in sources(root, "engine"):
        for inc in ANGLED.findall(text) + QUOTED.findall(text):
            if QT_HEADER.match(inc):
                problems.append(f"{path}: R2: includes the Qt header <{inc}> in the engine")
    for top in ("engine", "ui", "app", "tests"):
        for path, text in sources(root, top):
            if "TORCH_VERSION" in text and path != "engine/src/torch_compat.h":
                problems.append(f"{path}: R4: tests TORCH_VERSION outside engine/src/torch_compat.h")
    rows = table(root)
    row_of = {part: entries for parts, entries in rows for part in parts}
    used = {}
    for path, text in sources(root, "engine/src"):
        part = part_of(path)
        for inc in QUOTED.findall(text):
            target = target_of(inc)
            if target == "accum/" or target == part or os.path.splitext(inc)[0] + ".cpp" == part:
                continue
            used.setdefault(part, set()).add(inc)
            allowed = row_of.get(part)
            if allowed is None:
                problems.append(f"{path}: R3: the part {part} has no row in ARCHITECTURE.md's include table")
            elif target not in allowed and inc not in allowed:
                problems.append(f"{path}: R3: includes \"{inc}\", which the row of {part} does not allow")
    for parts, allowed in rows:
        includes = [inc for part in parts for inc in used.get(part, ())]
        for entry in sorted(allowed):
            if not any(inc == entry or target_of(inc) == entry for inc in includes):
                problems.append(f"docs/ARCHITECTURE.md: R3: the row of {', '.join(parts)} allows {entry}, which "
                                "the code does not include (a stale entry)")
    # No circle between the parts.
    graph = {p: {target_of(i) if "/" in i else os.path.splitext(i)[0] + ".cpp" for i in incs}
             for p, incs in used.items()}
    problems += ["engine/src: R3: a circle of includes: " + " -> ".join(c) for c in circles(graph)]
    problems += file_circles(root)
    problems += long_files(root)
    return problems


def circles(graph):
    """Each circle a depth-first walk of `graph` (node -> the nodes it uses) meets, from its first node."""
    found, state = [], {}

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


R5_FOLDERS = ("distributed",)


def file_circles(root):
    """R5: the circles between the files (x.h with x.cpp) of each folder of R5_FOLDERS."""
    graph = {}
    for path, text in sources(root, "engine/src"):
        inside = path[len("engine/src/"):]
        if "/" not in inside:
            continue
        folder, name = inside.rsplit("/", 1)
        if folder not in R5_FOLDERS:
            continue
        unit = folder + "/" + os.path.splitext(name)[0]
        for inc in QUOTED.findall(text):
            if inc.startswith(folder + "/") and inc.count("/") == folder.count("/") + 1:
                other = os.path.splitext(inc)[0]
                if other != unit:
                    graph.setdefault(unit, set()).add(other)
    return ["engine/src: R5: a circle between files: " + " -> ".join(c) for c in circles(graph)]


CODE_LINES = 600
TEST_LINES = 800
TEST_SOURCE = SOURCE + (".py", ".sh")



def long_files(root):
    """R6: a code file of ui/, engine/, app/ above CODE_LINES lines; R7: a test file above TEST_LINES."""
    problems = []
    for top in ("ui", "engine", "app"):
        for path, text in sources(root, top):
            if text.count("\n") > CODE_LINES:
                problems.append(f"{path}: R6: {text.count(chr(10))} lines, above {CODE_LINES}: split it by job")
    for path, text in sources(root, "tests", TEST_SOURCE):
        if text.count("\n") > TEST_LINES:
            problems.append(f"{path}: R7: {text.count(chr(10))} lines, above {TEST_LINES}: split it by subject")
    return problems


def breaks(root):
    """Copies what the check reads, adds one break of each rule, and expects each found."""
    work = tempfile.mkdtemp(prefix="layering-")
    try:
        for part in ("engine", "ui", "app", "docs"):
            shutil.copytree(os.path.join(root, part), os.path.join(work, part),
                            ignore=shutil.ignore_patterns("*.png", "*.svg"))
        def append(relative, line):
            with open(os.path.join(work, relative), "a", encoding="utf-8") as f:
                f.write("\n" + line + "\n")
        append("ui/main_window.cpp", "#include <torch/torch.h>")
        append("engine/src/session.cpp", "#include <QString>")
        append("engine/src/memory/out_of_memory.cpp", '#include "training/run_context.h"')
        append("engine/src/data/dataset.cpp", "#if TORCH_VERSION_MAJOR > 1\n#endif")
        append("engine/src/distributed/rendezvous.cpp", '#include "distributed/process_group.h"')
        # R6 in each of the three parts (the first source file of each), R7 in a new test file.
        long_ones = []
        for top in ("ui", "engine", "app"):
            first = next(path for path, _ in sources(work, top) if path.endswith(".cpp"))
            append(first, "\n".join("// a line" for _ in range(CODE_LINES)))
            long_ones.append(first + ": R6")
        os.makedirs(os.path.join(work, "tests", "engine"))
        with open(os.path.join(work, "tests", "engine", "test_long.py"), "w", encoding="utf-8") as f:
            f.write("# a line\n" * (TEST_LINES + 1))
        expected = ["ui/main_window.cpp: R1", "engine/src/session.cpp: R2",
                    "engine/src/memory/out_of_memory.cpp: R3", "engine/src/data/dataset.cpp: R4",
                    "R3: a circle of includes", "R5: a circle between files",
                    *long_ones, "tests/engine/test_long.py: R7"]
        found = check(work)
        missing = [e for e in expected if not any(p.startswith(e) or e in p for p in found)]
        for p in found:
            print("found:", p)
        for e in missing:
            print("NOT FOUND:", e)
        print(f"breaks: {len(expected) - len(missing)} of {len(expected)} found")
        return 1 if missing else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) == 3 and argv[2] == "--breaks":
        return breaks(argv[1])
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
