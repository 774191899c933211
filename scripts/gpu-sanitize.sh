#!/usr/bin/env bash
# compute-sanitizer over `dfgnn bench` cases on the GPU machine: each tool on each case, a line
# per run, and a non-zero exit when any run failed.
#
#   scripts/gpu-sanitize.sh BINARY GRAPH CASE... [-- ARGS...]
#
# Each CASE is one word `MODEL HEADS FEAT` (quote it), e.g. 'gatv2 3 33'; ARGS go to every
# `BINARY --backend cuda bench MODEL --graph GRAPH --heads HEADS --feat FEAT --schedule auto
# --warmup 0 --repeats 1 --input-sets 1 ARGS` (e.g. --tiles edges). TOOLS (default "memcheck
# racecheck synccheck initcheck") picks the tools. Each run's log goes to
# LOGS/sanitizer-TOOL-MODEL-HxF.txt (LOGS default /tmp/o), and its line, with the tool's summary,
# to stdout and LOGS/sanitizer.txt.
set -uo pipefail
[[ $# -ge 3 ]] || { echo "usage: scripts/gpu-sanitize.sh BINARY GRAPH 'MODEL HEADS FEAT'... [-- ARGS...]" >&2; exit 2; }
binary=$1
graph=$2
shift 2
cases=()
while [[ $# -gt 0 && $1 != -- ]]; do
  cases+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift
logs=${LOGS:-/tmp/o}
mkdir -p "$logs"
failed=0
for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
  for c in "${cases[@]}"; do
    read -r model heads feat <<<"$c"
    log=$logs/sanitizer-$tool-$model-${heads}x$feat.txt
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$binary" --backend cuda bench "$model" --graph "$graph" \
      --heads "$heads" --feat "$feat" --schedule auto --warmup 0 --repeats 1 --input-sets 1 "$@" > "$log" 2>&1
    rc=$?
    ((rc == 0)) || failed=1
    echo "compute-sanitizer $tool $model ${heads}x$feat rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' ')" |
      tee -a "$logs/sanitizer.txt"
  done
done
exit $failed
