#!/usr/bin/env bash
# check_generated_docs.sh ACCUM_RUN MAN_PAGE COMPLETION
# The generated manual page and bash completion against the program's --help.
set -euo pipefail
program=$1 page=$2 completion=$3
for f in "$page" "$completion"; do
  [[ -f $f ]] || { echo "FAIL: $f is missing (build the default target first)"; exit 1; }
done
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mapfile -t options < <("$program" --help | sed -n 's/^  \(--[a-z0-9-]*\).*/\1/p')
((${#options[@]} > 30)) || fail "only ${#options[@]} options in $program --help"
words=$(sed -n "s/.*compgen -W '\(--[^']*\)'.*/\1/p" "$completion")
entries=$(sed -n '/^\.TP/{n;s/\\-/-/g;s/\\f[BIR]//g;s/ .*//;p}' "$page") # the tagged paragraphs' names
for o in "${options[@]}"; do
  grep -qx -- "$o" <<<"$entries" || fail "$o is not an entry of $page"
  [[ " $words " == *" $o "* ]] || fail "$o is not offered by $completion"
done

# groff reads the page without a warning (-ww: all of them).
if command -v groff >/dev/null; then
  warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1 || true)
  [[ -z $warnings ]] || fail "groff: $warnings"
fi

# The completion itself, through bash-completion's machinery.
main=/usr/share/bash-completion/bash_completion
if [[ ! -r $main ]]; then
  echo "SKIP: $main is missing (Debian: bash-completion): the completion was not run"
  ((failures == 0)) && exit 77
  exit 1
fi
complete_line() { # words of a command line → what the completion offers for the last one
  bash --norc --noprofile -c '
    source "$1"; source "$2"; shift 2
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMP_WORDS=() # as bash splits them: "--opt=value" is "--opt" "=" "value"
    for w in "$@"; do
      if [[ $w == --*=* ]]; then COMP_WORDS+=("${w%%=*}" "=" "${w#*=}"); else COMP_WORDS+=("$w"); fi
    done
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _accum_run accum-run "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$main" "$completion" "$@"
}
expect() { # expected-output words...
  local want=$1; shift
  local got; got=$(complete_line "$@" | sort | tr '\n' ' ' | sed 's/ $//')
  [[ $got == "$want" ]] || fail "completing '$*': got '$got', want '$want'"
}
expect "accelerator" accum-run --mode acc
expect "cnn" accum-run train --model c
expect "epoch no steps" accum-run --eval-strategy ""
expect "cosine" accum-run --scheduler=cos
expect "plan" accum-run pl
expect "--batch-norm --batch-size" accum-run --batch
expect "" accum-run --batch-size ""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run-a" && touch "$tmp/run-b.json"
expect "$tmp/run-a" accum-run --resume "$tmp/run-"
expect "$tmp/run-a $tmp/run-b.json" accum-run --config "$tmp/run-"

((failures == 0)) && echo "PASS: ${#options[@]} options in the manual page and the completion; the completion completes"
((failures == 0))
# SPDX-License-Identifier: GPL-3.0-or-later
