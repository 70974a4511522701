#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Two builds' accum-run side by side, alternated in rounds: the MLP on
# Fashion-MNIST, 64 × 4, one thread a process, 400 optimizer steps, as
# 2 processes syncing every micro-batch, 2 processes (no_sync) and 1 process.
# Prints each run's samples/s and the medians (bench/DIST_WAIT.md).
#
#   bench/wait_ab.sh BUILD_A BUILD_B [ROUNDS]
set -euo pipefail
a="$1/app/accum-run"; b="$2/app/accum-run"; rounds="${3:-4}"
for bin in "$a" "$b"; do [[ -x "$bin" ]] || { echo "wait_ab.sh: $bin not found" >&2; exit 1; }; done
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
results="$work/results"
for ((r = 1; r <= rounds; r++)); do
  for side in A B; do
    bin="$a"; [[ $side == B ]] && bin="$b"
    for mode in sync no_sync one; do
      case $mode in
        sync) extra=(--nproc-per-node 2 --sync-each-micro-batch) ;;
        no_sync) extra=(--nproc-per-node 2) ;;
        one) extra=() ;;
      esac
      rm -rf "$work/out"
      rate=$("$bin" --batch-size 64 --accumulation-steps 4 --max-steps 400 --threads 1 "${extra[@]}" \
               --output-dir "$work/out" --quiet 2>&1 | grep -o '[0-9.]* samples/s' | cut -d' ' -f1) ||
        { echo "wait_ab.sh: $side $mode failed" >&2; exit 1; }
      echo "$r $side $mode $rate" | tee -a "$results"
    done
  done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for mode in ("sync", "no_sync", "one"):
    med = {s: statistics.median(float(r[3]) for r in rows if r[1] == s and r[2] == mode) for s in "AB"}
    print(f"{mode:8} A {med['A']:9.0f}  B {med['B']:9.0f}  B/A {med['B'] / med['A']:.2f}")
PY
