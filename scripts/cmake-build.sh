#!/usr/bin/env bash
# Configures (Release, Ninja when there is one, ccache when there is one) and
# builds one build folder. Extra arguments go to the configure step, and so
# does $ACCUM_CMAKE_ARGS; ACCUM_CONFIGURE_ONLY=1 stops after configuring (the
# caller builds the targets it needs).
# Usage: scripts/cmake-build.sh BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$1"; shift

GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Hits across checkouts (a fresh clone elsewhere compiles the same sources):
  # paths below the source folder are hashed relative to it. The precompiled
  # headers need the two sloppiness settings (ccache's manual, "Precompiled
  # headers").
  export CCACHE_BASEDIR="$ROOT"
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
fi
# shellcheck disable=SC2086 # ACCUM_CMAKE_ARGS is a list of words
cmake -S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}" "$@" ${ACCUM_CMAKE_ARGS:-}
if [[ "${ACCUM_CONFIGURE_ONLY:-0}" != 1 ]]; then
  cmake --build "$BUILD_DIR" --parallel "$(nproc)"
fi
# SPDX-License-Identifier: GPL-3.0-or-later
