#!/usr/bin/env bash
# Installs the Debian packages that are missing, then configures and builds
# against Debian's LibTorch 1.13 (the default build).
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
# For LibTorch 2.11 (CUDA build) see scripts/build-libtorch2.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build}"
"$ROOT/scripts/install-packages.sh"
"$ROOT/scripts/cmake-build.sh" "$BUILD_DIR"
