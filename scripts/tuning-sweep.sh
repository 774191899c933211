#!/usr/bin/env bash
# The scheduler's tuning sweep (docs/results.md): on each graph of the tuning set, GT 4×64 under
# the plan (`auto`), every schedule, and forced planner options around the plan's choices.
#   scripts/tuning-sweep.sh [DFGNN_BINARY] [CORA_NPZ] [CITESEER_NPZ]
# Needs DFGNN_GRAPH_TOOL_DIR (scripts/fetch-graph-tool-data.sh) for the gt-* graphs.
set -uo pipefail
d=${1:-target/release/dfgnn}
graphs=(gt-email-Enron gt-as-22july06 gt-pgp-strong-2009 gt-cond-mat-2005 gt-astro-ph gt-hep-th gt-power)
[[ -n ${2:-} ]] && graphs+=("$2")
[[ -n ${3:-} ]] && graphs+=("$3")
for g in "${graphs[@]}"; do
  hf=(--heads 4 --feat 64)
  case $g in *cora* | *citeseer*) hf=(--heads 4 --feat 32) ;; esac
  echo "=== $g ${hf[*]}"
  "$d" bench gt --graph "$g" "${hf[@]}" --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused 2>&1 |
    grep -E "^(graph|bytes|device|schedule|auto|row_|edge|unfused)"
  for t in 32 64 128 256 512; do
    echo "--- row_split --split-threshold $t"
    "$d" bench gt --graph "$g" "${hf[@]}" --schedule row_split --split-threshold "$t" 2>&1 | grep -E "^row_split"
  done
  for o in "--max-slots 2" "--max-slots 4" "--block-threads 64" "--block-threads 256" "--natural-row-order"; do
    echo "--- auto $o"
    # shellcheck disable=SC2086
    "$d" bench gt --graph "$g" "${hf[@]}" --schedule auto $o 2>&1 | grep -E "^auto"
  done
done
