#!/usr/bin/env bash
# Times two builds of `dfgnn` against each other on the tuning set and the issue's generated cases
# (forward and forward+backward, `auto`), and this build's forced scheduler options against its
# `auto`: packed short rows off (`--team-rows-below 0`) and on for every whole row
# (`--team-rows-below 4294967296`). Prints one table row per case. Needs no Rust: run it on the
# GPU machine from two release binaries built elsewhere.
#
#   scripts/sched-compare.sh BASE_BINARY NEW_BINARY [CORA_NPZ] [CITESEER_NPZ]
#
# BASE_BINARY is main's `dfgnn` (the behaviour to beat), NEW_BINARY this branch's. The gt-*
# graphs need DFGNN_GRAPH_TOOL_DIR (scripts/fetch-graph-tool-data.sh). Packing applies only to
# lane maps with several teams (H x ceil(F / load width) rounded up to powers of two at most 16
# lanes: GT 2x8, 1x16, GAT 8x8); the usual shapes (4x64, 4x32, 1x128) have one team and show
# whether the ordinary kernels changed. The last column is the new build's launches per call
# (forward / forward+backward) and plan. Timings are medians of the bench's repeats; identical
# plans of 0.02-0.2 ms can vary by up to 30 % between calls, so compare the columns of one run.
# A second table times node reordering (`--reorder degree`, `--reorder rcm`) against the graph
# as given, with the reordering's host cost. PARTS (default "tuning generated reorder") picks the
# parts to run, so that each fits one command's time limit.
set -uo pipefail
parts=" ${PARTS:-tuning generated reorder} "

base=${1:?usage: sched-compare.sh BASE_BINARY NEW_BINARY [CORA_NPZ] [CITESEER_NPZ]}
new=${2:?usage: sched-compare.sh BASE_BINARY NEW_BINARY [CORA_NPZ] [CITESEER_NPZ]}
tuning=(gt-email-Enron gt-as-22july06 gt-pgp-strong-2009 gt-cond-mat-2005 gt-astro-ph gt-hep-th gt-power)
[[ -n ${3:-} ]] && tuning+=("$3")
[[ -n ${4:-} ]] && tuning+=("$4")

# `fwd fwd+bwd plan` of the auto row of one bench call, or `- - error` when it did not run.
auto_row() {
  local out
  out=$("$@" --schedule auto 2>&1) || { echo "- - error"; return; }
  awk '$1 == "auto" && $2 != "cannot" { plan = ""; for (i = 10; i <= NF; i++) plan = plan " " $i; print $2, $3, plan; found = 1 }
       END { if (!found) print "- - error" }' <<<"$out"
}

printf '%-22s %-4s %-6s | %17s | %17s | %17s | %17s | %s\n' graph model shape "base auto" "new auto" \
  "new packing off" "new packing all" "new: launches fwd/fwd+bwd, plan"
row() {
  local graph=$1 model=$2 heads=$3 feat=$4 forced=$5
  local args=(bench "$model" --graph "$graph" --heads "$heads" --feat "$feat")
  read -r bf bb _ < <(auto_row "$base" "${args[@]}")
  read -r nf nb nplan < <(auto_row "$new" "${args[@]}")
  local off="-" all="-"
  if [[ $forced == forced ]]; then
    read -r of ob _ < <(auto_row "$new" "${args[@]}" --team-rows-below 0)
    read -r af ab _ < <(auto_row "$new" "${args[@]}" --team-rows-below 4294967296)
    off="$of / $ob" all="$af / $ab"
  fi
  printf '%-22s %-4s %-6s | %17s | %17s | %17s | %17s |%s\n' "$(basename "$graph" .npz)" "$model" \
    "${heads}x$feat" "$bf / $bb" "$nf / $nb" "$off" "$all" "$nplan"
}

if [[ $parts == *" tuning "* ]]; then
  for g in "${tuning[@]}"; do
    case $g in *cora* | *citeseer*) row "$g" gt 4 32 plain ;; *) row "$g" gt 4 64 plain ;; esac
    row "$g" gt 2 8 forced
    row "$g" gt 1 16 forced
    row "$g" gat 8 8 forced
  done
fi
if [[ $parts == *" generated "* ]]; then
  row er-1M-d16 gt 4 64 plain
  row pl-1M-d16 gt 4 64 plain
  row er-1M-d16 gt 1 128 plain
  row batch-1024x120-d50 gt 1 128 plain
  row batch-1024x120-d50 gat 8 8 forced
fi
[[ $parts == *" reorder "* ]] || exit 0

# Node reordering (this build only): auto on the graph as given, relabelled by decreasing
# in-degree, and by reverse Cuthill-McKee; the reordering's host cost is printed by bench.
echo
printf '%-22s %-6s | %17s | %17s %-24s | %17s %-24s\n' graph shape "as given" "degree order" "(host cost)" "rcm" \
  "(host cost)"
reorder_row() {
  local graph=$1 heads=$2 feat=$3
  local args=(bench gt --graph "$graph" --heads "$heads" --feat "$feat")
  read -r gf gb _ < <(auto_row "$new" "${args[@]}")
  local cells=()
  for o in degree rcm; do
    local out cost
    out=$("$new" "${args[@]}" --reorder "$o" --schedule auto 2>&1)
    cost=$(grep -o 'in [0-9.]* ms, relabelled in [0-9.]* ms' <<<"$out" | awk '{print $2 "+" $6 " ms"}')
    read -r of ob _ < <(awk '$1 == "auto" && $2 != "cannot" { print $2, $3; found = 1 } END { if (!found) print "- -" }' <<<"$out")
    cells+=("$of / $ob" "(${cost:-error})")
  done
  printf '%-22s %-6s | %17s | %17s %-24s | %17s %-24s\n' "$(basename "$graph" .npz)" "${heads}x$feat" \
    "$gf / $gb" "${cells[@]}"
}
for g in "${tuning[@]}"; do
  case $g in *cora* | *citeseer*) reorder_row "$g" 4 32 ;; *) reorder_row "$g" 4 64 ;; esac
done
reorder_row er-1M-d16 4 64
reorder_row pl-1M-d16 4 64
