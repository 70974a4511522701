#!/usr/bin/env bash
# Quick start: set everything up, then run the studio's main job on the default
# experiment (Fashion-MNIST, MLP, micro-batch 64 × 4 accumulation steps, 3 epochs):
# the studio window when a display is present, otherwise the same experiment
# through the headless runner.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" "$ROOT/build"
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$ROOT/build/app/accum-studio" ]]; then
  exec "$ROOT/build/app/accum-studio" "$@"
fi
echo "No display: running the default experiment with accum-run (results under runs/)."
exec "$ROOT/build/app/accum-run" --mode pytorch --dataset fashion-mnist --model mlp \
  --batch-size 64 --accumulation-steps 4 --epochs 3 --lr 0.05 --optimizer sgd --momentum 0.9 --seed 0 "$@"
# SPDX-License-Identifier: GPL-3.0-or-later
