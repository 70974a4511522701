#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# docs/screenshot-tensorboard.png: TensorBoard's Scalars dashboard with the runs
# of the peers case tensorboard_trainer, accum-run's and the real Trainer's event
# files side by side. Runs the case first (CTest: peers.tensorboard_trainer),
# then a local TensorBoard on a free port and headless Chromium (Debian:
# chromium) against it.
#
#   scripts/tensorboard-screenshot.sh            into docs/
#   BUILD=build-other OUT=/tmp/shots scripts/tensorboard-screenshot.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build-libtorch2}"
OUT="${OUT:-$ROOT/docs}"
VENV="${VENV:-$HOME/.cache/accum-studio/venv-torch2}"
die() { echo "tensorboard-screenshot.sh: $*" >&2; exit 1; }
command -v chromium > /dev/null || die "needs chromium (Debian: apt-get install chromium)"
[[ -x "$VENV/bin/tensorboard" ]] || die "no tensorboard in $VENV (scripts/setup-libtorch2.sh makes it)"
(cd "$BUILD" && ctest -R '^peers\.tensorboard_trainer$' --output-on-failure) || die "the peers case failed"
work="$BUILD/tests/peers/work-tensorboard_trainer"

# The runs under the names the picture shows, in a folder of their own.
tmp="$(mktemp -d)"
trap 'kill "${server:-0}" 2> /dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/runs/accum-run" "$tmp/runs/Trainer"
cp "$work"/engine-trainer/runs/*/events.out.tfevents.* "$tmp/runs/accum-run/"
cp "$work"/hf-trainer/runs/*/events.out.tfevents.* "$tmp/runs/Trainer/"
port="$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
(cd "$tmp" && exec "$VENV/bin/tensorboard" --logdir runs --host 127.0.0.1 --port "$port" > "$tmp/server.log" 2>&1) &
server=$!
for _ in $(seq 1 60); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" && break
  sleep 1
done
curl -s -o /dev/null "http://127.0.0.1:$port/" || die "TensorBoard did not start: $(tail -5 "$tmp/server.log")"
# The Trainer's training scalars, unsmoothed; the page is given 20 s of its own time to draw.
timeout 120 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,770 \
  --virtual-time-budget=20000 --screenshot="$OUT/screenshot-tensorboard.png" \
  "http://127.0.0.1:$port/?darkMode=false#scalars&tagFilter=train%2F(loss%7Cgrad_norm%7Clearning_rate)&_smoothingWeight=0" \
  > /dev/null 2>&1 || die "chromium could not take the picture"
echo "wrote $OUT/screenshot-tensorboard.png"
