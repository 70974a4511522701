#!/usr/bin/env bash
# Checks what a person installs, from an already built tree (nothing is rebuilt):
#  1. `cmake --install` into a scratch prefix: every file in its place, the
#     desktop entry and AppStream metainfo valid (desktop-file-validate,
#     appstreamcli), the manual pages clean for groff, the installed accum-run
#     training, the installed studio starting offscreen with its Vietnamese
#     translation read from that prefix and a run directory given on its
#     command line;
#  2. `cpack -G DEB`: lintian without errors; installed with apt-get, the
#     installed programs run, the desktop entry is in place; removed again.
#     Where accum-studio is already installed, that copy is left alone and the
#     apt-get steps are skipped (a test run never changes what is installed).
# Usage: scripts/check-install.sh [BUILD_DIR]   (default: build)
# Needs root, or sudo, for part 2 (apt-get); ACCUM_SKIP_DEB=1 skips part 2.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
APP_ID=io.github.accumulate_studio.AccumulateStudio
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$WORK/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"

failures=0
pass() { echo "check-install: ok   $*"; }
fail() { echo "check-install: FAIL $*"; failures=$((failures + 1)); }
check() { # description command...
  local what=$1; shift
  local out
  if out=$("$@" 2>&1); then pass "$what"; else fail "$what"; echo "$out" | sed 's/^/    /'; fi
}

# A short experiment with an installed accum-run, and the studio opening its
# directory: prefix (/usr or the scratch one) → checks.
check_programs() {
  local bin=$1 where=$2
  check "$where: accum-run trains (synthetic-pairs, 5 steps)" \
    "$bin/accum-run" --dataset synthetic-pairs --model mlp --batch-size 16 --accumulation-steps 4 --max-steps 5 \
    --eval-strategy no --quiet --output-dir "$WORK/run-$where"
  check "$where: accum-run wrote a completed summary" grep -q '"status":"completed"' "$WORK/run-$where/summary.json"
  local help
  help=$("$bin/accum-studio" --help 2>/dev/null) || true
  check "$where: accum-studio --help lists --demo NAME with the demos and run directories" \
    bash -c '[[ $1 == *"--demo <NAME>"*"code-panel, compare-styles"* && $1 == *"[run-dir...]"* ]]' _ "$help"
  check "$where: accum-studio opens the run directory (offscreen)" \
    "$bin/accum-studio" --language en --screenshot-after 300 --screenshot "$WORK/runs-$where.png" "$WORK/run-$where"
  check "$where: accum-studio grabbed its window" test -s "$WORK/runs-$where.png"
  local err rc=0
  err=$("$bin/accum-studio" "$WORK/no-such-run" 2>&1) || rc=$?
  check "$where: accum-studio names a bad run directory and exits 2" \
    bash -c '[[ $1 == 2 && $2 == *no-such-run* ]]' _ "$rc" "$err"
}

# ---------------------------------------------------------------- 1. install tree
PREFIX="$WORK/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
for f in bin/accum-run bin/accum-studio \
  share/accum-studio/translations/accum_studio_vi.qm \
  share/accum-studio/lessons/gradient-accumulation.json share/accum-studio/lessons/chapter-text-classifier.json \
  share/applications/$APP_ID.desktop share/metainfo/$APP_ID.metainfo.xml \
  share/icons/hicolor/scalable/apps/$APP_ID.svg \
  share/man/man1/accum-run.1.gz share/man/man1/accum-studio.1.gz \
  share/bash-completion/completions/accum-run \
  share/doc/accum-studio/copyright share/doc/accum-studio/changelog.gz; do
  check "installed: $f" test -s "$PREFIX/$f"
done
for size in 16 22 24 32 48 64 128 256; do
  png="$PREFIX/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
  check "icon ${size}x${size} is a ${size} x ${size} PNG" \
    bash -c '[[ $(file -b "$1") == "PNG image data, $2 x $2,"* ]]' _ "$png" "$size"
done
check "desktop-file-validate" desktop-file-validate "$PREFIX/share/applications/$APP_ID.desktop"
check "appstreamcli validate" appstreamcli validate --no-net "$PREFIX/share/metainfo/$APP_ID.metainfo.xml"
check "appstreamcli validate-tree (metainfo, desktop entry, icons together)" \
  appstreamcli validate-tree --no-net "$PREFIX"
for page in accum-run accum-studio; do
  check "man page $page: groff reads it without a warning" \
    bash -c '[[ -z $(zcat "$1" | groff -man -ww -z -Tutf8 2>&1) ]]' _ "$PREFIX/share/man/man1/$page.1.gz"
done
check "the installed programs do not name the build tree" \
  bash -c '! grep -qF "$1" "$2/bin/accum-run" "$2/bin/accum-studio"' _ "$BUILD" "$PREFIX"
check_programs "$PREFIX/bin" prefix
# The Vietnamese translation comes from the prefix: found there, and missed
# (with the directory named) once it is taken away.
err=$("$PREFIX/bin/accum-studio" --language vi --screenshot-after 300 --screenshot "$WORK/vi.png" 2>&1) || true
check "prefix: the studio finds its Vietnamese translation in the prefix" \
  bash -c '[[ $1 != *"no translation"* ]] && test -s "$2"' _ "$err" "$WORK/vi.png"
mv "$PREFIX/share/accum-studio/translations" "$WORK/translations-away"
err=$("$PREFIX/bin/accum-studio" --language vi --screenshot-after 100 --screenshot "$WORK/vi2.png" 2>&1) || true
check "prefix: without it, the studio says so and names where it looked" \
  bash -c '[[ $1 == *"no translation for '"'"'vi'"'"' in $2"* ]]' _ "$err" "$PREFIX/share/accum-studio/translations"
mv "$WORK/translations-away" "$PREFIX/share/accum-studio/translations"

# ---------------------------------------------------------------- 2. Debian package
if [[ "${ACCUM_SKIP_DEB:-0}" == 1 ]]; then
  echo "check-install: the Debian package is skipped (ACCUM_SKIP_DEB=1)"
else
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  rm -f "$BUILD"/accum-studio_*.deb
  if ! out=$(cd "$BUILD" && cpack -G DEB 2>&1); then
    echo "$out"
    fail "cpack -G DEB"
    exit 1
  fi
  DEB=$(ls "$BUILD"/accum-studio_*.deb)
  pass "cpack -G DEB: $(basename "$DEB"), depends: $(dpkg-deb -f "$DEB" Depends)"
  for lesson in "$ROOT"/resources/lessons/*.json; do
    check "the .deb holds the lesson $(basename "$lesson")" \
      bash -c 'dpkg-deb -c "$1" | grep -q " \./usr/share/accum-studio/lessons/$2\$"' _ "$DEB" "$(basename "$lesson")"
  done
  check "lintian: no errors" lintian --fail-on error "$DEB"
  if dpkg-query -W -f='${Status}' accum-studio 2>/dev/null | grep -q "install ok installed"; then
    # Running the tests never changes what a user has installed: their copy
    # stays, and the package's own install and removal are not tried here.
    echo "check-install: accum-studio $(dpkg-query -W -f='${Version}' accum-studio) is installed on this machine;" \
      "it is left as it is, and the .deb's apt-get install and remove are skipped (lintian checked it)"
  else
    check "apt-get install ./$(basename "$DEB")" \
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$DEB"
    check "the desktop entry is in place and valid" desktop-file-validate /usr/share/applications/$APP_ID.desktop
    check "the metainfo is in place and valid" appstreamcli validate --no-net /usr/share/metainfo/$APP_ID.metainfo.xml
    check "man accum-run finds the page" man -w accum-run
    check_programs /usr/bin deb
    err=$(/usr/bin/accum-studio --language vi --screenshot-after 300 --screenshot "$WORK/vi-deb.png" 2>&1) || true
    check "deb: the studio finds its Vietnamese translation under /usr" \
      bash -c '[[ $1 != *"no translation"* ]] && test -s "$2"' _ "$err" "$WORK/vi-deb.png"
    check "apt-get remove accum-studio" $SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq accum-studio
    check "removed: no accum-run, no desktop entry" \
      bash -c '! test -e /usr/bin/accum-run && ! test -e /usr/share/applications/$1.desktop' _ "$APP_ID"
  fi
fi

if ((failures)); then
  echo "check-install: $failures check(s) failed"
  exit 1
fi
echo "check-install: all checks passed"
# SPDX-License-Identifier: GPL-3.0-or-later
