#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every source file of the tree says its licence in one SPDX line (README.md, Licence).

    check_spdx.py ROOT

Source files are the tracked files (git ls-files, or a walk of ROOT without its build
folders when ROOT is no git checkout) whose name ends in one of SOURCE_SUFFIXES or is
one of SOURCE_NAMES. The line `SPDX-License-Identifier: GPL-3.0-or-later`, after the comment
marker of the file's language, must be among the first five lines or the last three (files
older than the licence carry it last, so that no line of their code moved: the same objects,
__LINE__ in messages, line numbers in reports and in git blame). Exits 0 when
every one has it, 1 naming each that does not. Files that cannot hold a comment (pictures,
data, JSON) are covered by .reuse/dep5, which `reuse lint` checks (licence.reuse_lint).
"""
import os
import subprocess
import sys

SOURCE_SUFFIXES = (".cpp", ".h", ".inc", ".cu", ".py", ".sh", ".cmake", ".proto")
SOURCE_NAMES = ("CMakeLists.txt",)
LINE = "SPDX-License-Identifier: GPL-3.0-or-later"


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            files += [os.path.relpath(os.path.join(top, n), root) for n in names]
        return files


def is_source(path):
    name = os.path.basename(path)
    return name in SOURCE_NAMES or name.endswith(SOURCE_SUFFIXES) or path.startswith(".ci/")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    problems = []
    checked = 0
    for path in sorted(tracked_files(root)):
        if not is_source(path) or not os.path.isfile(os.path.join(root, path)):
            continue
        checked += 1
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        if not any(LINE in line for line in lines[:5] + lines[-3:]):
            problems.append(f"{path}:1: no '{LINE}' line among the first five or the last three")
    for p in problems:
        print(p)
    print(f"spdx: {checked} source files, {len(problems)} without the licence line")
    return 1 if problems or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
