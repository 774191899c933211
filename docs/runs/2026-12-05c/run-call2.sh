#!/usr/bin/env bash
# Call 2 (nineteenth session): GAT's backward passes without a dot product per edge
# (ScoreGradient::WEIGHTED). H = `9391f88` (HEAD's device code); R = the row pass factored only
# (dO_i·Σ α·w·h_j − D_i·Σ α·w); W = both passes factored, the column pass's sums in f32 (fails the
# star corner case: an upper bound only); D = both, the column pass's sums in f64; D72 = D with
# the column pass capped at 72 registers instead of 64. ncu of each kernel (H, D), then A/B.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
tar -xJf .gpu/call6.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum
for b in H W D; do
for c in "gat mol-16384 1 128" "gat er-1M-d16 1 128" "gat er-1M-d16 4 64"; do
  set -- $c
  echo "=== $b $c"
  timeout 60 ncu --clock-control none --kernel-name regex:gat_bwd --metrics $m /tmp/t/$b bench $1 --graph $2 --heads $3 --feat $4 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -E "Context|dram__bytes|gpu__time|registers|warps_active"
done
done > /tmp/o/ncu-bwd.txt
echo "== ncu done at $(($(date +%s) - start)) s" | tee -a /tmp/o/ncu-bwd.txt
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 500 - ($(date +%s) - start) )) 'H=/tmp/t/H' 'R=/tmp/t/R' 'W=/tmp/t/W' 'D=/tmp/t/D' 'D72=/tmp/t/D72' > /tmp/o/ab.txt <<'CASES'
gat mol-16384 1 128
gat er-1M-d16 1 128
gat er-1M-d16 4 64
gat gt-email-Enron 4 64
gat batch-1024x120-d50 1 128
gat pl-1M-d16 4 64
gat mol-16384 1 128 --dropout 0.5
gat gt-cond-mat-2005 4 64 --positive-part false
gat gt-cond-mat-2005 4 64 --positive-part true
gat mol-16384 1 128 --positive-part true
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
