#!/usr/bin/env bash
# Builds everything (engine, accum-run, the studio, every test) against the
# LibTorch of the pinned torch (scripts/requirements-torch2.txt) with CUDA,
# installing what is missing first: the Debian packages
# (scripts/install-packages.sh) and the pinned torch environment
# (scripts/setup-libtorch2.sh). Runs on a machine without a GPU: the CUDA code is
# compiled and linked, the CUDA tests skip at run time. PyPI's Linux torch is
# the CUDA build, whose CMake files need nvcc (NVIDIA's CUDA 13 toolkit; Debian
# does not package it): without nvcc this script stops and says so, and the
# CPU build is the quick start's (scripts/run-studio.sh, Debian's LibTorch
# 1.13), or an unpacked CPU LibTorch through CMAKE_PREFIX_PATH.
# Usage: scripts/build-libtorch2.sh [BUILD_DIR]   (default: build-libtorch2)
# Extra CMake arguments: $ACCUM_CMAKE_ARGS.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build-libtorch2}"
TORCH_PIN="$(sed -n 's/^torch==\([0-9.]*\).*/\1/p' "$ROOT/scripts/requirements-torch2.txt")"
if ! command -v "${CUDACXX:-nvcc}" >/dev/null; then
  echo "build-libtorch2: the pinned torch $TORCH_PIN is PyPI's CUDA build, whose CMake files need nvcc" \
    "(NVIDIA's CUDA 13 toolkit): put it on PATH or set CUDACXX. Without it, build for the CPU with" \
    "scripts/run-studio.sh (the quick start: Debian's LibTorch 1.13), or with a CPU LibTorch through" \
    "cmake -DCMAKE_PREFIX_PATH=/path/to/libtorch (README, LibTorch 2.x)" >&2
  exit 1
fi
"$ROOT/scripts/install-packages.sh"
PREFIX="$("$ROOT/scripts/setup-libtorch2.sh" | tail -1)"
"$ROOT/scripts/cmake-build.sh" "$BUILD_DIR" -DCMAKE_PREFIX_PATH="$PREFIX"
# SPDX-License-Identifier: GPL-3.0-or-later
