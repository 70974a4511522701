#!/usr/bin/env bash
# Set everything up, build, and run the test suite through CTest, in four parts
# (docs/testing.md says what each covers):
#  1. LibTorch 2.x, the first-class build (scripts/build-libtorch2.sh: the pinned
#     torch 2.x with CUDA in a virtual environment in the cache folder, made
#     once) in build-libtorch2/: everything is built with warnings as errors and
#     every test runs — engine, runner, studio (offscreen), peers against the
#     real torch, Accelerate and Transformers, torchrun, your own models, two
#     hosts in network namespaces, the readers' fuzzers, the docs, the CUDA tests
#     (compiled; they skip, saying why, without a CUDA device).
#  2. LibTorch 1.13 from Debian, the quick start's build, in build/: only what a
#     quick-start user does and what differs between the versions — accum-run,
#     the studio and the tests that start the engine from it, the default
#     experiment and the three styles, every test of torch_compat.h's callers
#     (autocast, the loss scaler, the counting allocator, c10d and torchrun 2.x's
#     store refused, a model needing a 2.x operator refused), and
#     versions.losses_agree (both builds' step losses side by side).
#  3. What a person installs, from build/ (the Debian package is the quick
#     start's): scripts/check-install.sh — the install tree, desktop entry,
#     metainfo, man pages, lintian, apt-get install and remove (skipped where
#     accum-studio is already installed, so that a user's copy stays).
#  4. AddressSanitizer + UndefinedBehaviorSanitizer on LibTorch 1.13 in
#     build-asan/: the engine tests that exercise the engine's own memory
#     handling (no GUI).
# Without nvcc (the CUDA toolkit 13.0, which LibTorch 2.x's CUDA CMake files
# need) part 1 is skipped, saying so, and part 2 runs every test instead.
# ACCUM_SKIP_LIBTORCH2=1, ACCUM_SKIP_LIBTORCH1=1, ACCUM_SKIP_INSTALL=1 and
# ACCUM_SKIP_SANITIZERS=1 skip a part (a quicker local run). Arguments go to
# part 1's ctest; ACCUM_TEST_JOBS sets how many tests run at once (the number of
# cores by default). Each part prints its time. Checks that measure speed or
# run for long live in bench/ (bench/README.md), not here.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS=0
leg_start=0
started=0
leg() { # name: the time of the part before, then this one's heading
  if ((started)); then echo "run-tests: that part took $((SECONDS - leg_start)) s"; fi
  started=1
  leg_start=$SECONDS
  echo "run-tests: === $1 ==="
}
alternation() { echo "$@" | tr ' ' '|'; }

# As many tests at once as cores (two here): most tests are one process on one
# core, and every bound a test checks leaves room for a neighbour.
JOBS="${ACCUM_TEST_JOBS:-$(nproc)}"
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
  echo "run-tests: ACCUM_TEST_JOBS must be a whole number of tests to run at once (1 or more), not '$JOBS'" >&2
  exit 2
fi
CTEST=(ctest --output-on-failure --timeout 900 -j"$JOBS")
export QT_QPA_PLATFORM=offscreen
# Runs keep their thread count (docs/accum-run.md, --threads): the tests compare
# runs' losses, and a parallel neighbour is other load to the adapting default.
export ACCUM_ADAPTIVE_THREADS=0
# ccache (scripts/cmake-build.sh): paths hashed relative to the source folder,
# the precompiled headers' two sloppiness settings.
export CCACHE_BASEDIR="$ROOT" CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"

leg "set-up: Debian's packages and the torch 2.x environment"
# The real Python libraries for the peers suite and torchrun: the pinned torch
# 2.x environment, made once in the cache folder (a download of about 3 GB).
"$ROOT/scripts/install-packages.sh"
"$ROOT/scripts/setup-libtorch2.sh" >/dev/null

if [[ "${ACCUM_SKIP_LIBTORCH2:-0}" != 1 ]] && ! command -v "${CUDACXX:-nvcc}" >/dev/null; then
  echo "run-tests: the LibTorch 2.x part is skipped: its CUDA build's CMake files need nvcc (the CUDA toolkit" \
    "13.0) on PATH or in CUDACXX, and this machine has none; the LibTorch 1.13 part runs every test instead"
  ACCUM_SKIP_LIBTORCH2=1
  ACCUM_LIBTORCH1_ALL=1
fi

if [[ "${ACCUM_SKIP_LIBTORCH2:-0}" != 1 ]]; then
  leg "LibTorch 2.x (first-class build, CUDA compiled, run on the CPU): build and ctest"
  # A compiler warning in the project's code fails this part and the next
  # (-Wall -Wextra on every target, CMakeLists.txt).
  ACCUM_CMAKE_ARGS="-DACCUM_WARNINGS_AS_ERRORS=ON ${ACCUM_CMAKE_ARGS:-}" \
    "$ROOT/scripts/build-libtorch2.sh" "$ROOT/build-libtorch2"
  (cd "$ROOT/build-libtorch2" && "${CTEST[@]}" "$@")
fi

if [[ "${ACCUM_SKIP_LIBTORCH1:-0}" != 1 ]]; then
  leg "LibTorch 1.13 (Debian, the quick start): build and ctest"
  # What differs between the versions, and what a quick-start user runs.
  LIBTORCH1_TESTS="test_cli test_styles test_mixed_precision test_kernels test_memory_anatomy test_distributed
    test_torchrun test_distributed_launch test_gradient_checkpoint"
  LIBTORCH1_UI_TESTS="test_studio_window test_engine_text test_config_form"
  REFERENCE=()
  if [[ -x "$ROOT/build-libtorch2/app/accum-run" && "${ACCUM_SKIP_LIBTORCH2:-0}" != 1 ]]; then
    REFERENCE=(-DACCUM_REFERENCE_RUN="$ROOT/build-libtorch2/app/accum-run")
  fi
  # The run command's configuration (scripts/quick-start-build.sh): what it
  # built is not built again.
  "$ROOT/scripts/quick-start-build.sh" "$ROOT/build" "${REFERENCE[@]}"
  if [[ "${ACCUM_LIBTORCH1_ALL:-0}" == 1 ]]; then
    cmake --build "$ROOT/build" --parallel "$(nproc)"
    (cd "$ROOT/build" && "${CTEST[@]}" "$@")
  else
    # The programs and what installing them needs (part 3), and those tests.
    cmake --build "$ROOT/build" --parallel "$(nproc)" --target accum-run accum-studio accum_translations \
      accum-run_manual_page accum-studio_manual_page accum-run_completion accum_changelog accum_icons \
      $LIBTORCH1_TESTS $LIBTORCH1_UI_TESTS
    # shellcheck disable=SC2086 # word lists
    (cd "$ROOT/build" && "${CTEST[@]}" \
      -R "^($(alternation $LIBTORCH1_TESTS)|ui\.($(alternation $LIBTORCH1_UI_TESTS))|versions\..*|models\.sdpa|install\..*)\$")
  fi
fi

if [[ "${ACCUM_SKIP_INSTALL:-0}" != 1 && "${ACCUM_SKIP_LIBTORCH1:-0}" != 1 ]]; then
  leg "install tree and Debian package"
  "$ROOT/scripts/check-install.sh" "$ROOT/build"
fi

if [[ "${ACCUM_SKIP_SANITIZERS:-0}" != 1 ]]; then
  leg "AddressSanitizer + UBSan (LibTorch 1.13): build and ctest"
  # The engine tests, instrumented; tests/engine/CMakeLists.txt gives each the
  # sanitizers' options (leak checking on, LibTorch's one-time allocations
  # suppressed by name in tests/engine/lsan.supp) and timeouts that fit.
  # UndefinedBehaviorSanitizer without its null, alignment and vptr checks,
  # which instrument every pointer use in LibTorch's inline code and made this
  # part's build three times as long (a null pointer's use still stops the
  # test, as a SEGV that AddressSanitizer reports with its stack).
  SAN="-fsanitize=address,undefined -fno-sanitize=vptr,alignment,null -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  LAUNCHER=()
  if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  # -O1 (AddressSanitizer's own advice) and -g1: line tables for the reports,
  # without the full debug information that makes LibTorch-heavy objects slow
  # to write and link.
  cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCUM_BUILD_GUI=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    "${LAUNCHER[@]}" -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" ${ACCUM_CMAKE_ARGS:-} >/dev/null
  # The engine's own memory handling: readers, config, control, the counting
  # allocator and memory records, the kernels, the loss scaler, the process
  # group, writes and the soak run. The rest of the engine tests run
  # uninstrumented in parts 1 and 2.
  SAN_TESTS="test_config test_readers test_control test_invariants test_kernels test_mixed_precision
    test_memory_anatomy test_distributed test_messages test_soak test_distributed_launch test_gradient_checkpoint"
  # shellcheck disable=SC2086
  cmake --build "$ROOT/build-asan" --parallel "$(nproc)" --target $SAN_TESTS accum-run
  # shellcheck disable=SC2086
  (cd "$ROOT/build-asan" && "${CTEST[@]}" -R "^($(alternation $SAN_TESTS))\$")
fi
echo "run-tests: that part took $((SECONDS - leg_start)) s; all parts passed in $SECONDS s"
# SPDX-License-Identifier: GPL-3.0-or-later
