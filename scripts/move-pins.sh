#!/usr/bin/env bash
# Moves the pins of scripts/requirements-torch2.txt to the newest releases the
# package index serves (or the versions given): makes a throwaway virtual
# environment, installs the top-level packages below into it, and writes its
# `pip freeze` (every dependency pinned) as the new requirements file. Then run
# scripts/run-tests.sh: setup-libtorch2.sh makes the environment again because
# the pins changed, and every suite runs on them. Say in docs/gpu.md which
# releases were checked.
# Usage: scripts/move-pins.sh [torch==X.Y.Z] [transformers==...] ...
#   (a package named here replaces its unpinned entry below)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
OUT="$ROOT/scripts/requirements-torch2.txt"
# What the project uses directly: torch (its wheel carries LibTorch), the peers'
# Accelerate and Transformers, numpy, and the Python tools the tests read with.
TOP=(torch accelerate transformers numpy tensorboard datasets safetensors psutil)
for want in "$@"; do
  name="${want%%[=<>]*}"
  for i in "${!TOP[@]}"; do [[ "${TOP[$i]}" == "$name" ]] && TOP[$i]="$want"; done
done
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${TOP[@]}"
{
  cat <<'HEAD'
# The Python side of the LibTorch 2.x build (scripts/setup-libtorch2.sh): torch
# (PyPI's default wheel: a CUDA 13 build, with the C++ LibTorch inside), the real
# Accelerate and Transformers for the peers tests, TensorBoard's reader, datasets
# and safetensors for the models suite, numpy. Every package pinned, the
# dependencies too: written by scripts/move-pins.sh (pip freeze).
HEAD
  "$WORK/venv/bin/python" -m pip freeze --disable-pip-version-check
} >"$OUT"
grep -E '^(torch|accelerate|transformers)==' "$OUT"
# SPDX-License-Identifier: GPL-3.0-or-later
