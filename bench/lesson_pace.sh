#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The lesson's steps, one after another, as a class sees them: test_classroom's
# lessonWalksAllSteps opens the lesson offscreen at 1280 × 720 and runs each
# step's own experiment on its own configuration (step 2 at the teaching pace
# of one second a micro-batch), then prints each step's wall time from the step's
# start to its verdict. This script runs it ROUNDS times and prints a Markdown
# table: the median per step, and the range. Run it from the source root after
# building test_classroom:
#   bench/lesson_pace.sh [BUILD_DIR] [ROUNDS]        (default build-libtorch2, 3)
set -euo pipefail
build=${1:-build-libtorch2}
rounds=${2:-3}
test_bin="$build/tests/ui/test_classroom"
[[ -x $test_bin ]] || { echo "lesson_pace.sh: no $test_bin (build test_classroom first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 1; r <= rounds; ++r)); do
    QT_QPA_PLATFORM=offscreen ACCUM_ADAPTIVE_THREADS=0 "$test_bin" lessonWalksAllSteps >"$out/round$r.txt" 2>&1 ||
        { echo "lesson_pace.sh: round $r failed:" >&2; tail -20 "$out/round$r.txt" >&2; exit 1; }
    echo "round $r: $(grep -c 'QINFO.*step [0-9]* (' "$out/round$r.txt") steps, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
# "step 3 (proof, 4766 ms): …" from every round, one line per step.
cat "$out"/round*.txt | sed -n 's/.*QINFO.*step \([0-9]*\) (\([a-z_]*\), \([0-9]*\) ms).*/\1 \2 \3/p' |
    sort -k1,1n -k3,3n | awk '
    { key = $1; name[key] = $2; ms[key, ++n[key]] = $3; if (key > last) last = key }
    END {
        print "| step | key | median (s) | range (s) |"
        print "|---|---|---|---|"
        total = 0
        for (k = 1; k <= last; ++k) {
            m = n[k]; med = (m % 2) ? ms[k, (m + 1) / 2] : (ms[k, m / 2] + ms[k, m / 2 + 1]) / 2
            total += med
            printf "| %d | %s | %.1f | %.1f–%.1f |\n", k, name[k], med / 1000, ms[k, 1] / 1000, ms[k, m] / 1000
        }
        printf "| | all ten | %.1f | |\n", total / 1000
    }'
