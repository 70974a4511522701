#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the Debian packages that are missing, then configures build/ against
# Debian's LibTorch 1.13 (the quick start's build) and builds what the studio
# runs: accum-run, accum-studio and its translations. The test command
# (scripts/run-tests.sh) configures the same folder with the same arguments
# (scripts/quick-start-build.sh holds them) and builds the rest, so running the
# two in either order compiles nothing twice.
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
# For LibTorch 2.x (CUDA build) see scripts/build-libtorch2.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build}"
"$ROOT/scripts/install-packages.sh"
"$ROOT/scripts/quick-start-build.sh" "$BUILD_DIR"
cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target accum-run accum-studio accum_translations
