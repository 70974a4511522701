#!/usr/bin/env bash
# The CUDA build, checked in one go on a machine with an NVIDIA GPU (no Qt needed):
#  1. configures the engine, accum-run and the tests with the GUI off against an
#     upstream LibTorch: $LIBTORCH (an unpacked LibTorch archive), else the
#     Python torch's (torch.utils.cmake_prefix_path), else whatever CMake finds
#     (Debian's CPU-only 1.13, which makes this a dry run);
#  2. builds accum-run and the CUDA tests;
#  3. runs the CUDA tests (ctest -L cuda: the three styles agree on CUDA, CUDA
#     against the CPU, memory records, --memory-budget, a real out-of-memory,
#     data-parallel NCCL with 2 GPUs or more);
#  4. runs a few accum-run commands (devices, a short run on each device, plan);
#  5. writes a JSON report of all of it.
# Without a CUDA device it does what it can (the CPU parts), says so, and exits 0
# when those pass. Exit 1 when anything that ran failed.
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]          (default: build-gpu)
# Environment: LIBTORCH=/path/to/libtorch   PYTHON=python3   JOBS=N
#              ACCUM_GPU_CHECK_REPORT=file  (default: BUILD_DIR/gpu-check-report.json)
#              CUDAToolkit_ROOT / CUDACXX when nvcc is not on PATH (LibTorch's CMake
#              files need the CUDA toolkit of the same major version as the build)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build-gpu}"
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)"
REPORT="${ACCUM_GPU_CHECK_REPORT:-$BUILD/gpu-check-report.json}"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc)}"
STARTED="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

say() { echo "gpu-check: $*"; }
json_string() { # text → a JSON string literal
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/}
  s=${s//$'\t'/\\t}
  printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037')"
}

failures=0
steps=()     # JSON objects, one per step
tests=()     # JSON objects, one per CTest test
commands=()  # JSON objects, one per accum-run command

step() { # name status detail
  steps+=("{\"name\": $(json_string "$1"), \"status\": $(json_string "$2"), \"detail\": $(json_string "$3")}")
  [[ $2 == failed ]] && failures=$((failures + 1))
  say "$1: $2${3:+ — $3}"
}

write_report() {
  local gpu=$1 result=$2
  {
    echo "{"
    echo "  \"started\": $(json_string "$STARTED"),"
    echo "  \"finished\": $(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),"
    echo "  \"result\": $(json_string "$result"),"
    echo "  \"gpu\": $gpu,"
    echo "  \"libtorch\": $(json_string "$TORCH_SOURCE"),"
    echo "  \"engine\": $(json_string "${ENGINE_VERSION:-}"),"
    echo "  \"nvidia_smi\": $(json_string "${NVIDIA_SMI:-}"),"
    echo "  \"devices\": $(json_string "${DEVICES:-}"),"
    echo "  \"steps\": [$(IFS=,; echo "${steps[*]}")],"
    echo "  \"tests\": [$(IFS=,; echo "${tests[*]}")],"
    echo "  \"commands\": [$(IFS=,; echo "${commands[*]}")]"
    echo "}"
  } >"$REPORT"
  say "report: $REPORT"
}

# ---------------------------------------------------------------- 1. configure
PREFIX_PATH=""
if [[ -n "${LIBTORCH:-}" ]]; then
  PREFIX_PATH="$LIBTORCH"
  TORCH_SOURCE="LIBTORCH=$LIBTORCH"
elif PY_PREFIX=$("$PYTHON" -c 'import torch, torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  PREFIX_PATH="$PY_PREFIX"
  TORCH_SOURCE="$("$PYTHON" -c 'import torch; print("Python torch " + torch.__version__)') ($PY_PREFIX)"
else
  TORCH_SOURCE="the LibTorch CMake finds by itself (neither LIBTORCH nor a Python torch)"
fi
say "LibTorch: $TORCH_SOURCE"
NVIDIA_SMI=""
if command -v nvidia-smi >/dev/null; then
  NVIDIA_SMI=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -8)
  say "nvidia-smi: ${NVIDIA_SMI//$'\n'/; }"
fi

LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
if cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DACCUM_BUILD_GUI=OFF \
  -DACCUM_BUILD_TESTS=ON ${PREFIX_PATH:+-DCMAKE_PREFIX_PATH="$PREFIX_PATH"} "${LAUNCHER[@]}" \
  >"$BUILD/configure.log" 2>&1; then
  step configure passed "$(grep -m1 'Accumulate Studio: LibTorch' "$BUILD/configure.log" | sed 's/^-- //')"
else
  step configure failed "see $BUILD/configure.log: $(grep -m1 -A3 'CMake Error' "$BUILD/configure.log" | tr '\n' ' ')"
  write_report false failed
  exit 1
fi

# ---------------------------------------------------------------- 2. build
if cmake --build "$BUILD" --parallel "$JOBS" --target accum-run test_cuda >"$BUILD/build.log" 2>&1; then
  step build passed "accum-run, test_cuda"
else
  step build failed "see $BUILD/build.log: $(grep -m3 'error' "$BUILD/build.log" | tr '\n' ' ')"
  write_report false failed
  exit 1
fi
RUN="$BUILD/app/accum-run"
ENGINE_VERSION=$("$RUN" --version 2>&1)
DEVICES=$("$RUN" devices 2>&1)
say "$ENGINE_VERSION"
echo "$DEVICES" | sed 's/^/gpu-check:   /'
GPU=false
grep -q $'^cuda:[0-9]*\tavailable' <<<"$DEVICES" && GPU=true
GPUS=$(grep -c $'^cuda:[0-9]*\tavailable' <<<"$DEVICES")

# ---------------------------------------------------------------- 3. CUDA tests
CTEST_LOG="$BUILD/ctest-cuda.log"
(cd "$BUILD" && ctest -L cuda -V --timeout 1200) >"$CTEST_LOG" 2>&1
ctest_rc=$?
# "N/M Test #K: name ....   Passed|***Skipped|***Failed"; with -V every line a
# test printed is prefixed "K: ", its verdict "K: PASS|SKIP|FAIL name…" and its
# measurements "K:   …".
while IFS= read -r line; do
  number=$(sed -E 's/.*Test +#([0-9]+): .*/\1/' <<<"$line")
  name=$(sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*/\1/' <<<"$line")
  case "$line" in
    *Passed*) status=passed ;;
    *Skipped*) status=skipped ;;
    *) status=failed ;;
  esac
  verdict=$(grep -m1 -E "^$number: (PASS|SKIP|FAIL) " "$CTEST_LOG" | sed -E "s/^$number: //")
  notes=$(grep -E "^$number:   " "$CTEST_LOG" | sed -E "s/^$number:   //")
  if [[ -z $verdict && $status == failed ]]; then
    verdict=$(grep -E "^$number: " "$CTEST_LOG" | grep -m3 -iE "error|fail" | sed -E "s/^$number: //")
  fi
  tests+=("{\"name\": $(json_string "$name"), \"status\": $(json_string "$status"), \"verdict\": $(json_string "$verdict"), \"notes\": $(json_string "$notes")}")
  say "  $name: $status${verdict:+ — $verdict}"
  [[ -n $notes ]] && sed 's/^/gpu-check:       /' <<<"$notes"
done < <(grep -E "Test +#[0-9]+: " "$CTEST_LOG" | grep -E "Passed|Skipped|Failed|Timeout|Exception|Not Run")
if ((ctest_rc == 0)); then
  step "ctest -L cuda" passed "$(grep -cE 'Test +#[0-9]+: .*Passed' "$CTEST_LOG") passed, $(grep -cE 'Test +#[0-9]+: .*Skipped' "$CTEST_LOG") skipped (log: $CTEST_LOG)"
else
  step "ctest -L cuda" failed "see $CTEST_LOG"
fi

# ---------------------------------------------------------------- 4. accum-run
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# command: expected exit code, then the arguments.
command_failures=0
run_command() {
  local expect=$1; shift
  local start end out rc
  start=$(date +%s.%N)
  out=$("$RUN" "$@" 2>&1); rc=$?
  end=$(date +%s.%N)
  local seconds
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  local summary
  summary=$(grep -m1 -E '^summary:|^accum-run:' <<<"$out" || true)
  commands+=("{\"command\": $(json_string "accum-run $*"), \"exit_code\": $rc, \"expected\": $expect, \"seconds\": $seconds, \"summary\": $(json_string "$summary"), \"output_tail\": $(json_string "$(tail -5 <<<"$out")")}")
  if [[ $rc == "$expect" ]]; then
    say "  accum-run $*: exit $rc (${seconds} s) ${summary}"
  else
    say "  accum-run $*: exit $rc, expected $expect"
    tail -8 <<<"$out" | sed 's/^/gpu-check:     /'
    command_failures=$((command_failures + 1))
  fi
}
SHORT=(--dataset synthetic-pairs --model mlp --batch-size 32 --accumulation-steps 4 --max-steps 20 --eval-strategy no)
run_command 0 "${SHORT[@]}" --device cpu --output-dir "$WORK/cpu"
if $GPU; then
  run_command 0 "${SHORT[@]}" --device cuda --output-dir "$WORK/cuda"
  run_command 0 --dataset synthetic-lm --model transformer --batch-size 16 --accumulation-steps 4 --max-steps 20 \
    --loss-normalization tokens --eval-strategy no --device cuda --output-dir "$WORK/cuda-lm"
  run_command 0 plan --dataset synthetic-pairs --model transformer --target-batch 256 --memory-budget 256MiB \
    --device cuda --quiet
else
  # Without CUDA, asking for it is a clear error (exit 2), never a crash.
  run_command 2 "${SHORT[@]}" --device cuda --output-dir "$WORK/cuda"
fi
step "accum-run commands" "$( ((command_failures == 0)) && echo passed || echo failed)" \
  "${#commands[@]} commands, $command_failures not as expected"

# ---------------------------------------------------------------- 5. report
if ((failures)); then
  write_report "$GPU" failed
  say "FAILED: $failures step(s) or command(s); report $REPORT"
  exit 1
fi
if $GPU; then
  write_report true passed
  say "passed on $GPUS CUDA device(s)"
else
  write_report false no-gpu
  say "no CUDA device here (${DEVICES//$'\n'/; }): the CPU parts passed, the CUDA tests skipped; the CUDA path is untested"
fi
exit 0
