#!/usr/bin/env bash
# Set everything up, build, and run the whole test suite through CTest:
#  1. the Release build: engine, runner and studio tests (offscreen), a
#     bounded libFuzzer run over the readers, and the CUDA tests (label cuda;
#     they skip, saying why, on a machine without a CUDA device);
#  2. what a person installs, from that same build: the install tree and the
#     Debian package (scripts/check-install.sh: desktop entry, metainfo, man
#     pages, lintian, apt-get install and remove);
#  3. an AddressSanitizer + UndefinedBehaviorSanitizer build of the engine and
#     its tests (no GUI), run through CTest as well.
# ACCUM_SKIP_INSTALL=1 skips the second part, ACCUM_SKIP_SANITIZERS=1 the third
# (a quicker local run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" "$ROOT/build"
cd "$ROOT/build"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 "$@"

if [[ "${ACCUM_SKIP_INSTALL:-0}" != 1 ]]; then
  "$ROOT/scripts/check-install.sh" "$ROOT/build"
fi

if [[ "${ACCUM_SKIP_SANITIZERS:-0}" != 1 ]]; then
  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCUM_BUILD_GUI=OFF \
    -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >/dev/null
  cmake --build "$ROOT/build-asan" --parallel "$(nproc)" --target test_config test_readers test_invariants test_styles test_soak test_cli accum-run
  cd "$ROOT/build-asan"
  # LibTorch itself is not instrumented; its one-time static allocations are not leaks of ours.
  ASAN_OPTIONS="detect_leaks=0:alloc_dealloc_mismatch=0:abort_on_error=1" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --output-on-failure --timeout 1200 -R "^test_(config|readers|invariants|styles|soak|cli)$"
fi
