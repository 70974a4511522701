#!/usr/bin/env bash
# Fills a folder with what a GPU machine that has only a Python torch (no Debian
# packages, no network) needs besides it to build and check the engine:
# nlohmann-json's and zlib's headers and the Fashion-MNIST files, all taken from
# this machine's Debian packages (scripts/install-packages.sh installs them).
# scripts/gpu-check.sh uses DIR when it is there (ACCUM_DEPS_DIR).
# Usage: scripts/gpu-deps.sh [DIR]   (default: .gpu-deps, ignored by git)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/.gpu-deps}"
FASHION="${ACCUM_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
for need in /usr/include/nlohmann/json.hpp /usr/include/zlib.h "$FASHION/train-images-idx3-ubyte.gz"; do
  [[ -e $need ]] || { echo "gpu-deps: $need is missing (scripts/install-packages.sh installs it)" >&2; exit 1; }
done
rm -rf "$DIR.tmp"
mkdir -p "$DIR.tmp/include" "$DIR.tmp/fashion-mnist"
cp -r /usr/include/nlohmann "$DIR.tmp/include/"
cp /usr/include/zlib.h /usr/include/zconf.h "$DIR.tmp/include/" 2>/dev/null ||
  cp /usr/include/zlib.h /usr/include/x86_64-linux-gnu/zconf.h "$DIR.tmp/include/"
cp "$FASHION"/*-ubyte.gz "$DIR.tmp/fashion-mnist/"
rm -rf "$DIR"
mv "$DIR.tmp" "$DIR"
echo "gpu-deps: $DIR ($(du -sh "$DIR" | cut -f1))"
# SPDX-License-Identifier: GPL-3.0-or-later
