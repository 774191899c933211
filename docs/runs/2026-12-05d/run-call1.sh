#!/usr/bin/env bash
# Call 1 (twentieth session): the GPU tests and the main job on A (the row pass's D from the edges
# of one-step rows, `b123907`, plus the row record: `(m, 1/l, D, el)` per row and head written by
# the row pass, read by the column pass in one sector instead of three); ncu of GAT's backward
# kernels on mol-16384 1x128 and er-1M-d16 1x128 (H, A); A/B of H (`9391f88`: main's device code
# before this session), B (`b123907`) and A.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
scripts/gpu-call.sh .gpu/call10.tar.xz A
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
m=gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread
for c in "gat mol-16384 1 128" "gat er-1M-d16 1 128"; do
for b in H A; do
  set -- $c
  echo "=== $b $c"
  timeout 60 ncu --clock-control none --kernel-name regex:bwd --metrics $m /tmp/t/$b bench $1 --graph $2 --heads $3 --feat $4 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -E "^  [a-z_]+.*\(|gpu__time|dram__bytes|registers"
done
done > /tmp/o/ncu-bwd.txt
echo "== ncu done at $(($(date +%s) - start)) s" | tee -a /tmp/o/ncu-bwd.txt
cp /tmp/o/*.txt $OUT/
for round in 1 2; do
scripts/ab.sh -b $(( 300 + 130 * round - ($(date +%s) - start) )) 'H=/tmp/t/H' 'B=/tmp/t/B' 'A=/tmp/t/A' >> /tmp/o/ab.txt <<'CASES'
gat mol-16384 1 128
gt mol-16384 1 128
agnn mol-16384 1 128
gatv2 mol-16384 1 128
gat gt-as-22july06 4 64
gt gt-as-22july06 4 64
gat gt-power 4 64
agnn cora 4 32
gat er-1M-d16 1 128
gat er-1M-d16 4 64
gt er-1M-d16 1 128
gt gt-email-Enron 8 32
gat gt-email-Enron 4 64
gat batch-1024x120-d50 1 128
gatv2 er-1M-d16 4 64
agnn er-1M-d16 1 128
CASES
cp /tmp/o/*.txt $OUT/
done
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
