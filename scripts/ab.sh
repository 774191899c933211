#!/usr/bin/env bash
# A/B timings with `dfgnn bench` on the GPU machine: binaries and options side by side, in one
# run, so that every variant sees the same machine state.
#
#   scripts/ab.sh [-b SECONDS] VARIANT... < CASES
#
# VARIANT is one word `LABEL=BINARY [ARGS...]` (quote it), e.g. 'new=/tmp/t/F',
# 'off=/tmp/t/F --tiles off' or 'old=/tmp/t/O'. Each line of CASES is `MODEL GRAPH HEADS FEAT
# [ARGS...]` (lines starting with `#` are skipped; scripts/target-cases.txt lists the issues'
# target cases). For each case, each variant in turn runs
#   BINARY bench MODEL --graph GRAPH --heads HEADS --feat FEAT --repeats 10 ARGS...
# with `--schedule auto` unless the arguments name a schedule, and prints
#   LABEL MODEL GRAPH HxF [CASE ARGS] | <bench's result lines, or its error>
# Cases left when SECONDS (default 540) have passed are listed as not run. Never a test: the
# numbers are for docs/results.md, with the date, commit and command beside them.
set -uo pipefail

budget=540
if [[ ${1:-} == -b ]]; then
  budget=$2
  shift 2
fi
[[ $# -gt 0 ]] || { echo "usage: scripts/ab.sh [-b SECONDS] 'LABEL=BINARY [ARGS...]'... < CASES" >&2; exit 2; }
variants=("$@")
start=$(date +%s)
while read -r model graph heads feat rest; do
  [[ -z ${model:-} || $model == \#* ]] && continue
  for variant in "${variants[@]}"; do
    label=${variant%%=*}
    read -r -a command <<<"${variant#*=}"
    extra="${command[*]:1} $rest"
    [[ $extra == *--schedule* ]] || extra="--schedule auto $extra"
    what="$label $model $graph ${heads}x$feat${rest:+ $rest}"
    if (($(date +%s) - start > budget)); then
      echo "$what | not run: past the ${budget} s budget"
      continue
    fi
    # shellcheck disable=SC2086 # the arguments are words on purpose
    result=$(timeout 120 "${command[0]}" bench "$model" --graph "$graph" --heads "$heads" --feat "$feat" \
      --repeats 10 $extra 2>&1 | grep -E '^[a-z_]+ +[0-9]|error|cannot run' | tr -s ' ' | tr '\n' ' ')
    echo "$what | $result"
  done
done
