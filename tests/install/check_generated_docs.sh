#!/usr/bin/env bash
# check_generated_docs.sh ACCUM_RUN MAN_PAGE COMPLETION
# The manual page and bash completion that accum-run-docs writes from the option
# table, against the program's --help (printed from the same table by other code):
# every option an entry of the page and offered by the completion, and every
# enumerated value ("--mode pytorch | accelerator | trainer") completed.
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cwd" # completions that also offer file names run in an empty directory
complete_line() { # words of a command line → what the completion offers for the last one
  (cd "$tmp/cwd" && bash --norc --noprofile -c '
    source "$1"; source "$2"; shift 2
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMP_WORDS=() # as bash splits them: "--opt=value" is "--opt" "=" "value"
    for w in "$@"; do
      if [[ $w == --*=* ]]; then COMP_WORDS+=("${w%%=*}" "=" "${w#*=}"); else COMP_WORDS+=("$w"); fi
    done
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _accum_run accum-run "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$main" "$completion" "$@")
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
mkdir "$tmp/run-a" && touch "$tmp/run-b.json"
expect "$tmp/run-a" accum-run --resume "$tmp/run-"
expect "$tmp/run-a $tmp/run-b.json" accum-run --config "$tmp/run-"

# Every enumerated option completes to its values: the help's "a | b | c" words
# (a pattern such as cuda:N or FILE.pt is no value).
enumerated=0
while read -r option values; do
  want=$(tr ' ' '\n' <<<"$values" | { grep -v -e '[A-Z]' -e '^$' || true; } | sort | tr '\n' ' ' | sed 's/ $//')
  expect "$want" accum-run "$option" ""
  enumerated=$((enumerated + 1))
done < <("$program" --help | awk '/^  --[a-z0-9-]+ [A-Z]/ { option = $1; next }
  option != "" && /^      [a-z0-9:.-]+( \| [A-Za-z0-9:.-]+)+/ {
    sub(/^ +/, ""); line = $0; values = ""
    while (match(line, /^[A-Za-z0-9:.-]+/)) {
      word = substr(line, 1, RLENGTH); line = substr(line, RLENGTH + 1)
      sub(/[:.]$/, "", word); values = values " " word
      if (line !~ /^ \| /) break
      line = substr(line, 4)
    }
    print option values }
  { option = "" }')
((enumerated >= 10)) || fail "only $enumerated enumerated options found in $program --help"

((failures == 0)) && echo "PASS: ${#options[@]} options in the manual page and the completion; the completion completes, $enumerated enumerated options to their values"
((failures == 0))
# SPDX-License-Identifier: GPL-3.0-or-later
