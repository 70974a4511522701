#!/usr/bin/env bash
# Training speed with the counting allocator vs LibTorch's own, side by side,
# alternating A B A B in one go. Times only the training steps (summary's
# samples_per_second with --eval-strategy no; data loading is before the clock).
# Usage: bench/allocator_overhead.sh [ROUNDS]   (default 5)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$ROOT/build/app/accum-run"
ROUNDS="${1:-5}"
OUT="$(mktemp -d)"
ARGS=(--dataset fashion-mnist --model mlp --batch-size 64 --accumulation-steps 4 --max-steps 600
      --eval-strategy no --save-strategy no --threads 1 --quiet)
rate() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples_per_second"])' "$1/summary.json"; }
for i in $(seq "$ROUNDS"); do
  "$RUN" "${ARGS[@]}" --output-dir "$OUT/a$i" >/dev/null
  ACCUM_COUNTING_ALLOCATOR=0 "$RUN" "${ARGS[@]}" --output-dir "$OUT/b$i" >/dev/null
  echo "round $i: counting $(rate "$OUT/a$i") samples/s, plain $(rate "$OUT/b$i") samples/s"
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
a = [json.load(open(f"{out}/a{i}/summary.json"))["samples_per_second"] for i in range(1, n + 1)]
b = [json.load(open(f"{out}/b{i}/summary.json"))["samples_per_second"] for i in range(1, n + 1)]
ma, mb = statistics.median(a), statistics.median(b)
print(f"median counting {ma:.0f} samples/s (range {min(a):.0f}-{max(a):.0f}), "
      f"plain {mb:.0f} samples/s (range {min(b):.0f}-{max(b):.0f}), ratio {ma / mb:.3f}")
PY
# SPDX-License-Identifier: GPL-3.0-or-later
