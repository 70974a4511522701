#!/usr/bin/env bash
# Set everything up, build, and run the whole test suite through CTest, against
# both LibTorch versions the project supports:
#  1. the default build (Debian's LibTorch 1.13, CPU) in build/: engine, runner
#     and studio tests (offscreen), a bounded libFuzzer run over the readers,
#     the CUDA tests (label cuda; they skip, saying why, without a CUDA
#     device), and the peers suite (tests/peers: the same experiments in the
#     real torch 2.11, Accelerate and Transformers, from the environment of
#     scripts/setup-libtorch2.sh, made first);
#  2. what a person installs, from that same build: the install tree and the
#     Debian package (scripts/check-install.sh: desktop entry, metainfo, man
#     pages, lintian, apt-get install and remove, skipped where accum-studio is
#     already installed so that a user's copy stays);
#  3. the LibTorch 2.11 build with CUDA in build-libtorch2/
#     (scripts/build-libtorch2.sh: the pinned torch 2.11 in a virtual
#     environment in the cache folder, made once): everything is built; every
#     engine test, two studio tests, the CUDA tests (compiled, skipping here),
#     the install checks of the generated docs, versions.losses_agree (the
#     step losses of both builds' accum-run side by side) and tests/models (your
#     own TorchScript model against eager torch 2.11);
#  4. an AddressSanitizer + UndefinedBehaviorSanitizer build of the engine and
#     its tests (no GUI), run through CTest as well (all but four, named there).
# ACCUM_SKIP_INSTALL=1 skips the second part, ACCUM_SKIP_LIBTORCH2=1 the third,
# ACCUM_SKIP_SANITIZERS=1 the fourth (a quicker local run). Arguments go to the
# first part's ctest; ACCUM_TEST_JOBS sets how many tests run at once (the
# number of cores by default). Each part prints its time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS=0
leg_start=0
leg() { # name: the time of the part before, then this one's heading
  if ((leg_start || SECONDS)); then echo "run-tests: that part took $((SECONDS - leg_start)) s"; fi
  leg_start=$SECONDS
  echo "run-tests: === $1 ==="
}

# The engine tests, as tests/engine/CMakeLists.txt registers them.
ENGINE_TESTS=$(sed -n 's/^accum_engine_test(\(test_[a-z_]*\).*/\1/p' "$ROOT/tests/engine/CMakeLists.txt")
alternation() { echo "$@" | tr ' ' '|'; }
# As many tests at once as cores (two here): most tests are one process on one
# core, and every bound a test checks leaves room for a neighbour.
JOBS="${ACCUM_TEST_JOBS:-$(nproc)}"
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
  echo "run-tests: ACCUM_TEST_JOBS must be a whole number of tests to run at once (1 or more), not '$JOBS'" >&2
  exit 2
fi

leg "LibTorch 1.13 (Debian): build and ctest"
# A compiler warning in the project's code fails this part (-Wall -Wextra on
# every target, CMakeLists.txt). The other parts build the same sources with
# other headers (LibTorch 2.11) or flags (-O1, sanitizers), where a warning is
# reported but does not fail.
ACCUM_CMAKE_ARGS="-DACCUM_WARNINGS_AS_ERRORS=ON ${ACCUM_CMAKE_ARGS:-}" "$ROOT/scripts/setup.sh" "$ROOT/build"
# The real Python libraries for the peers suite and torchrun (tests/peers,
# test_torchrun): the pinned torch 2.11 environment, made once in the cache folder.
"$ROOT/scripts/setup-libtorch2.sh" >/dev/null
(cd "$ROOT/build" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 -j"$JOBS" "$@")

if [[ "${ACCUM_SKIP_INSTALL:-0}" != 1 ]]; then
  leg "install tree and Debian package"
  "$ROOT/scripts/check-install.sh" "$ROOT/build"
fi

if [[ "${ACCUM_SKIP_LIBTORCH2:-0}" != 1 ]] && ! command -v "${CUDACXX:-nvcc}" >/dev/null; then
  echo "run-tests: the LibTorch 2.11 part is skipped: its CUDA build's CMake files need nvcc (the CUDA toolkit" \
    "13.0) on PATH or in CUDACXX, and this machine has none"
  ACCUM_SKIP_LIBTORCH2=1
fi
if [[ "${ACCUM_SKIP_LIBTORCH2:-0}" != 1 ]]; then
  leg "LibTorch 2.11 (CUDA build, on the CPU): build and ctest"
  ACCUM_CMAKE_ARGS="${ACCUM_CMAKE_ARGS:-} -DACCUM_REFERENCE_RUN=$ROOT/build/app/accum-run" \
    "$ROOT/scripts/build-libtorch2.sh" "$ROOT/build-libtorch2"
  # Every engine test, the CUDA tests (compiled, skipping here), the install
  # checks of the generated docs, versions.losses_agree, tests/models, and of the studio's
  # tests (all built here) the ones that start the engine from the window.
  LIBTORCH2_UI_TESTS="ui.test_studio_window|ui.test_engine_text"
  (cd "$ROOT/build-libtorch2" &&
    QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 -j"$JOBS" \
      -R "^($(alternation $ENGINE_TESTS)|$LIBTORCH2_UI_TESTS|cuda\..*|install\..*|versions\..*|models\..*)\$")
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
  if command -v ccache >/dev/null; then
    LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$ROOT" CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
  fi
  # -O1 (AddressSanitizer's own advice) and -g1: line tables for the reports,
  # without the full debug information that makes LibTorch-heavy objects slow
  # to write and link. Measured on one file here (run_directory.cpp): 76 s
  # at -O2 with every check, 23 s like this, 11 s uninstrumented.
  cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCUM_BUILD_GUI=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    "${LAUNCHER[@]}" -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" ${ACCUM_CMAKE_ARGS:-} >/dev/null
  # Left out here: test_write_failures and test_torchrun (not yet run
  # instrumented), test_amp_training and test_styles (the longest; the code
  # they run also runs instrumented here: the loss scaler in
  # test_mixed_precision and test_data_parallel, the three styles and their
  # checkpoints in test_cli, test_soak and test_data_parallel); all four run
  # in both other parts.
  SAN_TESTS=$(printf '%s\n' $ENGINE_TESTS | grep -vxE 'test_write_failures|test_torchrun|test_amp_training|test_styles')
  cmake --build "$ROOT/build-asan" --parallel "$(nproc)" --target $SAN_TESTS accum-run
  (cd "$ROOT/build-asan" && ctest --output-on-failure -j"$JOBS" -R "^($(alternation $SAN_TESTS))\$")
fi
echo "run-tests: that part took $((SECONDS - leg_start)) s; all parts passed in $SECONDS s"
