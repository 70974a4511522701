#!/usr/bin/env bash
# The CUDA build, checked in one go on a machine with an NVIDIA GPU that has
# little besides a Python torch 2.x (the pinned release of
# scripts/requirements-torch2.txt, cu130 or later), nvcc, cmake and ninja (no Qt, no
# Debian packages, no network):
#  1. configures the engine, accum-run and the tests with the GUI off against an
#     upstream LibTorch: $LIBTORCH (an unpacked LibTorch archive), else the
#     Python torch's (torch.utils.cmake_prefix_path), else whatever CMake finds;
#     nlohmann-json's and zlib's headers and Fashion-MNIST come from
#     $ACCUM_DEPS_DIR (default .gpu-deps, made here by scripts/gpu-deps.sh) where
#     the machine has no packages of its own;
#  2. builds accum-run and the CUDA tests;
#  3. runs the CUDA tests (ctest -L cuda: the three styles agree on CUDA, CUDA
#     against the CPU, memory records whose categories add up to the caching
#     allocator's allocated bytes, --memory-budget ending in exit 3 with a
#     suggestion that fits, a real out-of-memory, NCCL with 2 GPUs or more);
#  4. runs accum-run: devices; a short run on each device; fp16 with the dynamic
#     loss scaler, a first scale that overflows (its window is skipped, the run
#     goes on); bf16; NCCL with one rank; plan on CUDA; a traced Transformers
#     model from examples/ (--model FILE.pt) trained, estimated and planned;
#     an MLP's training step compiled for CUDA (--model FILE.pt2) trained;
#  5. the three styles on CUDA against the CPU, 20 updates of the MLP and the
#     CNN (tests/versions/compare_builds.py; tolerance 1e-2: cuDNN's
#     convolutions use TF32 on Ampere and later, 10 bits of mantissa);
#  6. samples/s of each model on CUDA, accum-run against eager PyTorch
#     (bench/eager_reference.py with the same torch) side by side, alternating;
#  7. writes one JSON report of all of it.
# Without a CUDA device it builds, does what it can (the CPU parts), says there
# is no GPU, and exits 0 when those pass. Exit 1 when anything that ran failed.
#
# Usage: scripts/gpu-check.sh [BUILD_DIR [REPORT_DIR]]   (default: build-gpu, BUILD_DIR)
# Environment: LIBTORCH=/path/to/libtorch   PYTHON=python3   JOBS=N
#              ACCUM_DEPS_DIR=DIR (default: .gpu-deps when it exists)
#              CUDAToolkit_ROOT / CUDACXX when nvcc is not on PATH (LibTorch's CMake
#              files need the CUDA toolkit of the same major version as the build)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build-gpu}"
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)"
REPORT_DIR="${2:-$BUILD}"
mkdir -p "$REPORT_DIR"
REPORT="$(cd "$REPORT_DIR" && pwd)/gpu-check-report.json"
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
COMPARISON="{}"  # step 5's JSON
SPEED="[]"       # step 6's JSON
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
    echo "  \"commands\": [$(IFS=,; echo "${commands[*]}")],"
    echo "  \"cuda_against_cpu\": $COMPARISON,"
    echo "  \"speed_against_eager\": $SPEED"
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

DEPS="${ACCUM_DEPS_DIR:-$ROOT/.gpu-deps}"
DEPS_ARGS=()
if [[ -d "$DEPS" ]]; then
  DEPS_ARGS=(-DACCUM_DEPS_DIR="$DEPS")
  say "headers and data not installed on this machine come from $DEPS"
  if [[ -z "${ACCUM_FASHION_MNIST_DIR:-}" && ! -d /usr/share/datasets/fashion-mnist && -d "$DEPS/fashion-mnist" ]]; then
    export ACCUM_FASHION_MNIST_DIR="$DEPS/fashion-mnist"
  fi
fi
FASHION="${ACCUM_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
if cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DACCUM_BUILD_GUI=OFF \
  -DACCUM_BUILD_TESTS=ON ${PREFIX_PATH:+-DCMAKE_PREFIX_PATH="$PREFIX_PATH"} "${LAUNCHER[@]}" "${DEPS_ARGS[@]}" \
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
# A summary's field, and how many step records say "skipped".
summary_field() { grep '"type":"summary"' "$1/metrics.jsonl" | sed -E "s/.*\"$2\":([^,}]*).*/\1/"; }
skipped_windows() { grep -c '"skipped":true' "$1/metrics.jsonl"; }
if $GPU; then
  run_command 0 "${SHORT[@]}" --device cuda --output-dir "$WORK/cuda"
  run_command 0 --dataset synthetic-lm --model transformer --batch-size 16 --accumulation-steps 4 --max-steps 20 \
    --loss-normalization tokens --eval-strategy no --device cuda --output-dir "$WORK/cuda-lm"
  # fp16 with the dynamic scaler: a first scale of 2^24 overflows fp16's
  # gradients (the logits' gradient is about scale / micro-batch = 5e5, past
  # fp16's 65504), so the first windows are skipped, the scale halving each
  # time, until the updates go through (from about 2^21).
  run_command 0 "${SHORT[@]}" --device cuda --mixed-precision fp16 --loss-scaling dynamic --loss-scale-init 16777216 \
    --output-dir "$WORK/cuda-fp16"
  skipped=$(skipped_windows "$WORK/cuda-fp16")
  step "fp16: an overflowing scale skips its window" "$( ((skipped >= 1 && skipped <= 10)) && echo passed || echo failed)" \
    "$skipped of 20 windows skipped (expected 1 to 10), then the scale fits"
  run_command 0 "${SHORT[@]}" --device cuda --mixed-precision bf16 --output-dir "$WORK/cuda-bf16"
  run_command 0 "${SHORT[@]}" --device cuda --nproc-per-node 1 --backend nccl --output-dir "$WORK/cuda-nccl1"
  run_command 0 plan --dataset synthetic-pairs --model transformer --target-batch 256 --memory-budget 256MiB \
    --device cuda --quiet
  # Your own model on CUDA: the traced Bert of examples/ (made here with the
  # Python torch and transformers), trained, estimated and planned under a budget.
  if "$PYTHON" "$ROOT/examples/transformers_models.py" bert "$WORK/bert.pt" "$WORK/bert_data.pt" \
    >"$BUILD/own-model.log" 2>&1; then
    OWN=(--model "$WORK/bert.pt" --dataset tensors --data "$WORK/bert_data.pt" --device cuda --optimizer adamw --lr 2e-3)
    run_command 0 "${OWN[@]}" --batch-size 16 --accumulation-steps 4 --max-steps 20 --eval-strategy no \
      --output-dir "$WORK/cuda-own"
    run_command 0 estimate "${OWN[@]}" --batch-size 128 --accumulation-steps 1
    run_command 0 plan "${OWN[@]}" --target-batch 512 --memory-budget 64MiB --quiet
  else
    step "own model: examples/transformers_models.py" failed "see $BUILD/own-model.log"
  fi
  # The training step as an AOTInductor package compiled for CUDA (examples/accum_pt2.py demo).
  if "$PYTHON" "$ROOT/examples/accum_pt2.py" "$WORK/mlp-cuda.pt2" "$WORK/mlp-cuda-data.pt" --device cuda \
    >"$BUILD/pt2-cuda.log" 2>&1; then
    run_command 0 --model "$WORK/mlp-cuda.pt2" --dataset tensors --data "$WORK/mlp-cuda-data.pt" --device cuda \
      --batch-size 8 --accumulation-steps 2 --max-steps 6 --output-dir "$WORK/cuda-pt2"
  else
    step "own model: a CUDA .pt2 package (examples/accum_pt2.py)" failed "see $BUILD/pt2-cuda.log"
  fi
else
  # Without CUDA, asking for it is a clear error (exit 2), never a crash.
  run_command 2 "${SHORT[@]}" --device cuda --output-dir "$WORK/cuda"
fi
step "accum-run commands" "$( ((command_failures == 0)) && echo passed || echo failed)" \
  "${#commands[@]} commands, $command_failures not as expected"

# ---------------------------------------------------------------- 5. CUDA against the CPU
if $GPU; then
  if "$PYTHON" "$ROOT/tests/versions/compare_builds.py" "$RUN" "$RUN" --reference-device cpu --candidate-device cuda \
    --kernels aten --tolerance 1e-2 --data "$FASHION" --work "$WORK/compare" --json "$WORK/compare.json" \
    >"$BUILD/compare-devices.log" 2>&1; then
    step "three styles, CUDA against the CPU" passed "$(tail -2 "$BUILD/compare-devices.log" | tr '\n' ' ')"
  else
    step "three styles, CUDA against the CPU" failed "see $BUILD/compare-devices.log: $(grep -m3 FAIL "$BUILD/compare-devices.log" | tr '\n' ' ')"
  fi
  [[ -s "$WORK/compare.json" ]] && COMPARISON=$(cat "$WORK/compare.json")

# ---------------------------------------------------------------- 6. speed against eager PyTorch
  rows=()
  for model in mlp cnn transformer; do
    dataset=fashion-mnist; [[ $model == transformer ]] && dataset=synthetic-pairs
    engine=(); eager=()
    for round in 1 2 3; do # alternating, the median of three each
      out=$("$RUN" --mode pytorch --dataset "$dataset" --data "$FASHION" --model "$model" --batch-size 64 \
        --accumulation-steps 4 --max-steps 200 --lr 0.05 --optimizer sgd --momentum 0.9 --eval-strategy no \
        --save-strategy no --device cuda --output-dir "$WORK/speed-$model-$round" --quiet 2>&1) || true
      engine+=("$(summary_field "$WORK/speed-$model-$round" samples_per_second)")
      eager+=("$("$PYTHON" "$ROOT/bench/eager_reference.py" --model "$model" --batch-size 64 --accumulation-steps 4 \
        --max-steps 200 --data "$FASHION" --device cuda 2>/dev/null | sed -E 's/.*"samples_per_second": ([0-9.e+-]+).*/\1/')")
    done
    median() { printf '%s\n' "$@" | grep -E '^[0-9.e+-]+$' | sort -g | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "null")}'; }
    e=$(median "${engine[@]}"); p=$(median "${eager[@]}")
    ratio=$(awk -v e="$e" -v p="$p" 'BEGIN { if (e+0 > 0 && p+0 > 0) printf "%.2f", e / p; else print "null" }')
    say "  $model 64 x 4 on CUDA: accum-run $e, eager PyTorch $p samples/s (x $ratio)"
    rows+=("{\"model\": \"$model\", \"engine_samples_per_second\": $e, \"eager_samples_per_second\": $p, \"ratio\": $ratio}")
  done
  SPEED="[$(IFS=,; echo "${rows[*]}")]"
  step "samples/s against eager PyTorch" passed "$(IFS=';'; echo "${rows[*]}")"
fi

# ---------------------------------------------------------------- 7. report
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
# SPDX-License-Identifier: GPL-3.0-or-later
