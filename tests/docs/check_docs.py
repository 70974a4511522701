#!/usr/bin/env python3
"""Keeps the manual honest (Python 3, standard library only).

    check_docs.py links ROOT              every relative link and image in README.md and
                                          docs/*.md names a file that exists; an anchor
                                          (#part) names a heading of that file
    check_docs.py options ROOT ACCUM_RUN  every accum-run option the docs name exists in
                                          `ACCUM_RUN --help`, and every option --help
                                          lists appears in docs/accum-run.md

Exits 0 when all is well, 1 naming each problem as FILE:LINE.
"""
import os
import re
import subprocess
import sys

# [text](target) and ![alt](target); a target may carry a "title".
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# <img src="..."> in raw HTML.
IMG = re.compile(r"<img\b[^>]*\bsrc=\"([^\"]+)\"", re.IGNORECASE)
INLINE_CODE = re.compile(r"`([^`]+)`")
OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")
# Options of other programs that the manual names in a bare code span (`--demo`); a span that
# starts with the program's name (`torchrun --max-restarts 1`) needs no entry here.
OTHER_PROGRAMS = {
    "accum-studio": {"autorun", "demo", "language", "lesson", "lesson-step", "lesson-file", "presentation",
                     "quit-after-run", "screenshot", "screenshot-after"},
    "torchrun": {"max-restarts", "monitor-interval", "no-python", "rdzv-backend", "rdzv-endpoint",
                 "rdzv-id"},
    "tests/versions/compare_builds.py": {"tolerance"},
    # examples/hf_to_accum.py's own options (docs/own-model.md), beside accum-run's.
    "examples/hf_to_accum.py": {"task", "tokenizer", "num-labels", "attn", "train", "validation", "text-column",
                                "text-pair-column", "tokens-column", "tags-column", "max-length", "output-model",
                                "output-data", "no-tokenizer-files", "set"},
}
# hf_to_accum.py's split of one data file and its LoRA options (docs/own-model.md).
OTHER_PROGRAMS["examples/hf_to_accum.py"] |= {"validation-split", "lora-r", "lora-alpha", "lora-dropout",
                                             "lora-target-modules", "lora-base-dtype"}
OTHER_OPTIONS = set().union(*OTHER_PROGRAMS.values())
# A word that ends a command in a code block: the options after it are not accum-run's.
COMMAND_BREAK = re.compile(r"^(?:\||\|\||&&|;|&|\)|#)$")


def manual_pages(root):
    pages = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    return [p for p in pages if os.path.isfile(p)]


def prose_lines(path):
    """(line number, text, in_code_block) for each line of a Markdown file."""
    in_code = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                yield number, line, None  # the fence itself
                continue
            yield number, line, in_code


def anchors(path):
    """GitHub's anchors for the headings of a Markdown file."""
    found = set()
    for _, line, in_code in prose_lines(path):
        if in_code is False and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title)
            found.add(title.replace(" ", "-"))
    return found


def check_links(root):
    problems = []
    for page in manual_pages(root):
        rel_page = os.path.relpath(page, root)
        for number, line, in_code in prose_lines(page):
            if in_code is not False:
                continue
            text = INLINE_CODE.sub("", line)
            for target in LINK.findall(text) + IMG.findall(text):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                path_part, _, anchor = target.partition("#")
                resolved = page if not path_part else os.path.normpath(
                    os.path.join(os.path.dirname(page), path_part))
                if not os.path.exists(resolved):
                    problems.append(f"{rel_page}:{number}: {target}: no such file")
                elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                    problems.append(f"{rel_page}:{number}: {target}: no heading #{anchor} there")
    return problems


def help_options(accum_run):
    out = subprocess.run([accum_run, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"{accum_run} --help exited {out.returncode}: {out.stderr.strip()}")
    return set(OPTION.findall(out.stdout))


def command_options(words):
    """The options of the accum-run commands among these shell words."""
    found, inside = [], False
    for word in words:
        if COMMAND_BREAK.match(word):
            inside = False
        elif re.search(r"(^|/)accum-run$", word):
            inside = True
        elif inside:
            found += OPTION.findall(word)
    return found


def mentioned_options(page):
    """(line, option) for each accum-run option a page names: in code blocks, the words after
    `accum-run` up to the end of the command (backslash continuations followed); in prose, a code
    span that starts with an option or with accum-run. A span that starts with another program
    (`torchrun --nnodes 2`, `bench/run_bench.py --rounds 3`) names that program's options."""
    found, words, first = [], [], None
    for number, line, in_code in prose_lines(page):
        if in_code:
            body = line.rstrip("\n")
            words += body.rstrip("\\").split()
            first = first or number
            if not body.rstrip().endswith("\\"):
                found += [(first, o) for o in command_options(words)]
                words, first = [], None
        elif in_code is False:
            for span in INLINE_CODE.findall(line):
                span = span.strip()
                if span.startswith("--"):
                    found += [(number, o) for o in OPTION.findall(span.split()[0]) if o not in OTHER_OPTIONS]
                elif re.match(r"^(\S*/)?accum-run\b", span):
                    found += [(number, o) for o in command_options(span.split())]
    return found


def check_options(root, accum_run):
    known = help_options(accum_run)
    problems = []
    for page in manual_pages(root):
        rel_page = os.path.relpath(page, root)
        for number, option in mentioned_options(page):
            if option not in known:
                problems.append(f"{rel_page}:{number}: --{option} is not an option of accum-run --help")
    reference = os.path.join(root, "docs", "accum-run.md")
    if not os.path.isfile(reference):
        return problems + ["docs/accum-run.md: missing (the reference of accum-run's options)"]
    with open(reference, encoding="utf-8") as f:
        documented = set(OPTION.findall(f.read()))
    for option in sorted(known - documented):
        problems.append(f"docs/accum-run.md: --{option} (in accum-run --help) is not documented")
    return problems


def main(argv):
    if len(argv) == 3 and argv[1] == "links":
        problems = check_links(argv[2])
    elif len(argv) == 4 and argv[1] == "options":
        problems = check_options(argv[2], argv[3])
    else:
        sys.exit(__doc__)
    for p in problems:
        print(p)
    print(f"{argv[1]}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
# SPDX-License-Identifier: GPL-3.0-or-later
