#!/usr/bin/env bash
# What measuring the gradient noise scale costs a run: the same runs with the
# estimator on and off (ACCUM_NOISE_SCALE=0), alternating A B A B, per
# configuration. Times only the training steps (summary's samples_per_second
# with --eval-strategy no; data loading is before the clock).
# Usage: bench/noise_scale_cost.sh [BUILD_DIR] [ROUNDS]   (default build-libtorch2, 5)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-build-libtorch2}"
RUN="$ROOT/$BUILD/app/accum-run"
ROUNDS="${2:-5}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
export ACCUM_ADAPTIVE_THREADS=0
# name, then the run's options: micro-batch × K from the worst case for the
# estimator (one pass over the gradients per window against a window of one
# small micro-batch more) to the default experiment.
CONFIGS=(
  "mlp-8x2|--model mlp --batch-size 8 --accumulation-steps 2 --max-steps 1500"
  "mlp-64x4|--model mlp --batch-size 64 --accumulation-steps 4 --max-steps 400"
  "cnn-16x2|--model cnn --batch-size 16 --accumulation-steps 2 --max-steps 150"
  "transformer-16x2|--model transformer --dataset synthetic-lm --batch-size 16 --accumulation-steps 2 --max-steps 60"
)
rate() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples_per_second"])' "$1/summary.json"; }
for config in "${CONFIGS[@]}"; do
  name="${config%%|*}"
  read -r -a args <<<"${config#*|}"
  common=("${args[@]}" --eval-strategy no --save-strategy no --threads 1 --quiet)
  for i in $(seq "$ROUNDS"); do
    "$RUN" "${common[@]}" --output-dir "$OUT/$name-on$i" >/dev/null
    ACCUM_NOISE_SCALE=0 "$RUN" "${common[@]}" --output-dir "$OUT/$name-off$i" >/dev/null
    echo "$name round $i: on $(rate "$OUT/$name-on$i") samples/s, off $(rate "$OUT/$name-off$i") samples/s"
  done
done
python3 - "$OUT" "$ROUNDS" "${CONFIGS[@]}" <<'PY'
import json, statistics, sys
out, n, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("| run | with the estimator (samples/s) | without | cost (1 − on/off, median of the rounds' ratios) | range |")
print("|---|---|---|---|---|")
for config in configs:
    name = config.split("|")[0]
    on = [json.load(open(f"{out}/{name}-on{i}/summary.json"))["samples_per_second"] for i in range(1, n + 1)]
    off = [json.load(open(f"{out}/{name}-off{i}/summary.json"))["samples_per_second"] for i in range(1, n + 1)]
    costs = sorted(1 - a / b for a, b in zip(on, off))
    print(f"| {name} | {statistics.median(on):.0f} | {statistics.median(off):.0f} | "
          f"{100 * statistics.median(costs):+.1f} % | {100 * costs[0]:+.1f} to {100 * costs[-1]:+.1f} % |")
PY
# SPDX-License-Identifier: GPL-3.0-or-later
