#!/usr/bin/env bash
# One gradient sync on Gloo between 2 local processes (one thread each): the
# engine (bench/allreduce_cost.cpp) and eager PyTorch (bench/allreduce_reference.py)
# side by side, alternating A B A B in one go. Each run prints the median and the
# 10th / 90th percentiles of 300 syncs; on a busy machine the median follows the
# scheduler (a rank that waits for a core waits a time slice), the 10th
# percentile the sync itself.
# Usage: bench/allreduce_cost.sh [ROUNDS] [RANKS]   (defaults 3, 2)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${1:-3}"
RANKS="${2:-2}"
export OMP_NUM_THREADS=1
for i in $(seq "$ROUNDS"); do
  echo "== round $i, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  "$ROOT/build/bench/allreduce_cost" "$RANKS" 300
  /usr/bin/python3 "$ROOT/bench/allreduce_reference.py" "$RANKS" 300
done
# SPDX-License-Identifier: GPL-3.0-or-later
