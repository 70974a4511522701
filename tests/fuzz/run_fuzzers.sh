#!/usr/bin/env bash
# Builds the reader fuzzers with clang's libFuzzer (+ AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for a bounded time: the engine's
# IDX, CSV, JSON-config and safetensors readers, and the studio's lesson reader.
# Usage: tests/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET] [WORK_DIR]
# The seed corpus in tests/fuzz/corpus/ is read, never written: new inputs go
# to WORK_DIR. A crash leaves its input in WORK_DIR and fails the script.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SECONDS_PER_TARGET="${1:-20}"
WORK="${2:-$(mktemp -d)}"
CXX="${FUZZ_CXX:-clang++}"
mkdir -p "$WORK"
COMMON=(-std=c++20 -O1 -g -fno-sanitize-recover=undefined -I"$ROOT/engine/include" -I"$ROOT/engine/src")
FLAGS=("${COMMON[@]}" -fsanitize=fuzzer,address,undefined)
CORE=("$ROOT/engine/src/run_config.cpp" "$ROOT/engine/src/metrics_io.cpp" "$ROOT/engine/src/engine_messages.cpp"
      "$ROOT/engine/src/data/idx_reader.cpp" "$ROOT/engine/src/data/csv_reader.cpp"
      "$ROOT/engine/src/data/safetensors_reader.cpp" "$ROOT/engine/src/training_arguments.cpp"
      "$ROOT/engine/src/run_config_choices.cpp" "$ROOT/engine/src/option_table.cpp")
HEADERS=("$ROOT"/engine/include/accum/*.h "$ROOT"/engine/src/data/*_reader.h "$ROOT/engine/src/training_arguments.h"
         "$ROOT/engine/src/config_fields.h")
newer_than() { # output inputs...: whether output is missing or older than an input
  local output="$1" input; shift
  [[ -e "$output" ]] || return 0
  for input in "$@"; do [[ "$input" -nt "$output" ]] && return 0; done
  return 1
}
# The readers are compiled once, instrumented for coverage (fuzzer-no-link: no
# libFuzzer main in them), and linked into each target.
CORE_OBJS=()
for src in "${CORE[@]}"; do
  obj="$WORK/core_$(basename "$src" .cpp).o"
  if newer_than "$obj" "$src" "${HEADERS[@]}"; then
    "$CXX" "${COMMON[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$src" -o "$obj"
  fi
  CORE_OBJS+=("$obj")
done
# The lesson reader (ui/lesson_file.cpp) with the experiments' table: Qt Core
# and the engine's torch-free API, no widget. Its seeds are the shipped lessons
# as well as tests/fuzz/corpus/lesson.
QT_CFLAGS=($(pkg-config --cflags Qt6Core)) QT_LIBS=($(pkg-config --libs Qt6Core))
LESSON=("$ROOT/ui/lesson_file.cpp" "$ROOT/ui/experiments.cpp")
LESSON_HEADERS=("$ROOT"/ui/lesson*.h "$ROOT/ui/experiments.h" "$ROOT/ui/run_result.h")
LESSON_OBJS=()
for src in "${LESSON[@]}"; do
  obj="$WORK/lesson_$(basename "$src" .cpp).o"
  if newer_than "$obj" "$src" "${HEADERS[@]}" "${LESSON_HEADERS[@]}"; then
    "$CXX" "${COMMON[@]}" -fPIC -I"$ROOT/ui" "${QT_CFLAGS[@]}" -fsanitize=fuzzer-no-link,address,undefined \
      -c "$src" -o "$obj"
  fi
  LESSON_OBJS+=("$obj")
done
status=0
for target in idx csv config safetensors lesson; do
  exe="$WORK/fuzz_$target"
  extra=() seeds=() max_len=4096
  if [[ "$target" == lesson ]]; then
    extra=(-fPIC -I"$ROOT/ui" "${QT_CFLAGS[@]}" "${LESSON_OBJS[@]}" "${QT_LIBS[@]}") seeds=("$ROOT/resources/lessons") max_len=65536
  fi
  if newer_than "$exe" "$HERE/fuzz_$target.cpp" "${CORE_OBJS[@]}" "${HEADERS[@]}" "${LESSON_OBJS[@]}"; then
    "$CXX" "${FLAGS[@]}" "$HERE/fuzz_$target.cpp" "${CORE_OBJS[@]}" "${extra[@]}" -lz -o "$exe"
  fi
  mkdir -p "$WORK/corpus_$target"
  echo "fuzz_$target: ${SECONDS_PER_TARGET}s"
  if ! (cd "$WORK" && "$exe" "$WORK/corpus_$target" "$HERE/corpus/$target" "${seeds[@]}" \
          -max_total_time="$SECONDS_PER_TARGET" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
          -print_final_stats=1 2>"$WORK/fuzz_$target.log"); then
    echo "fuzz_$target FAILED (see $WORK/fuzz_$target.log):"
    tail -40 "$WORK/fuzz_$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$WORK/fuzz_$target.log" | tail -2
  fi
done
exit $status
# SPDX-License-Identifier: GPL-3.0-or-later
