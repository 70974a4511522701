#!/usr/bin/env bash
# Builds everything (engine, accum-run, the studio, every test) against LibTorch
# 2.11 with CUDA, installing what is missing first: the Debian packages
# (scripts/install-packages.sh) and the pinned torch 2.11 environment
# (scripts/setup-libtorch2.sh). Runs on a machine without a GPU: the CUDA code is
# compiled and linked, the CUDA tests skip at run time.
# Usage: scripts/build-libtorch2.sh [BUILD_DIR]   (default: build-libtorch2)
# Extra CMake arguments: $ACCUM_CMAKE_ARGS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build-libtorch2}"
if ! command -v "${CUDACXX:-nvcc}" >/dev/null; then
  echo "build-libtorch2: LibTorch 2.11's CUDA build needs nvcc (the CUDA toolkit 13.0) for its CMake files:" \
    "put it on PATH or set CUDACXX" >&2
  exit 1
fi
"$ROOT/scripts/install-packages.sh"
PREFIX="$("$ROOT/scripts/setup-libtorch2.sh" | tail -1)"
"$ROOT/scripts/cmake-build.sh" "$BUILD_DIR" -DCMAKE_PREFIX_PATH="$PREFIX"
# SPDX-License-Identifier: GPL-3.0-or-later
