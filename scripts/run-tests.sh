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
  # Every engine test, instrumented; tests/engine/CMakeLists.txt gives each the
  # sanitizers' options (leak checking on, LibTorch's one-time allocations
  # suppressed by name in tests/engine/lsan.supp) and timeouts that fit.
  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCUM_BUILD_GUI=OFF \
    -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" ${ACCUM_CMAKE_ARGS:-} >/dev/null
  ENGINE_TESTS=$(sed -n 's/^accum_engine_test(\(test_[a-z_]*\).*/\1/p' "$ROOT/tests/engine/CMakeLists.txt")
  cmake --build "$ROOT/build-asan" --parallel "$(nproc)" --target $ENGINE_TESTS accum-run
  cd "$ROOT/build-asan"
  ctest --output-on-failure -R "^($(echo $ENGINE_TESTS | tr ' ' '|'))\$"
fi
