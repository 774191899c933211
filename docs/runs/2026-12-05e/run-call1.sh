#!/usr/bin/env bash
# Call 1 (twenty-first session): the GPU tests and the main job on T (main's device code, the row
# record as committed in `24870ce`/`cd5b53b` and never yet run on a GPU, plus the team layouts:
# packed kernels of two slots, heads of 32 vectors on 16 lanes, two short rows per warp), then
# A/B rounds: R (`cd5b53b`, main's device code), T under `auto` and with `--teams 2` forced, C (T
# with the team layout's packed kernels capped at 96 registers) forced, on graphs of short rows at
# 1x128; and H (`9391f88`) against R at 8 heads (the row record's four sectors per row there).
start=$(date +%s)
. scripts/gpu-env.sh
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt-small  # the three graph-tool graphs this call reads (the carry limit)
scripts/gpu-call.sh .gpu/call12.tar.xz T
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
for round in 1 2; do
scripts/ab.sh -b $(( 100 + 170 * round - ($(date +%s) - start) )) 'R=/tmp/t/R' 'T=/tmp/t/T' 'T2=/tmp/t/T --teams 2' 'C2=/tmp/t/C --teams 2' >> /tmp/o/ab.txt <<'CASES'
gat mol-16384 1 128
gt mol-16384 1 128
agnn mol-16384 1 128
gatv2 mol-16384 1 128
gat gt-email-Enron 1 128
gt gt-as-22july06 1 128
CASES
cp /tmp/o/*.txt $OUT/
done
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) 'H=/tmp/t/H' 'R=/tmp/t/R' >> /tmp/o/ab.txt <<'CASES'
gt er-1M-d16 8 32
agnn er-1M-d16 8 32
gat er-1M-d16 1 128
CASES
cp /tmp/o/*.txt $OUT/
echo "done at $(($(date +%s) - start)) s"
