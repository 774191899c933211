#!/usr/bin/env bash
# Call 2 (twentieth session): the GPU tests and the main job on R (`24870ce`, the row record with
# the column pass gathering no head-scalar row operand, merged with `part-tolerance`: GAT's
# per-edge tiles sum α⁺ in blocks, and the `gat_duplicate_hub` test); ncu of the backward passes
# (H, R) on GT er-1M-d16 1x128 and GAT er-1M-d16 4x64; A/B of H (`9391f88`, main's device code
# before this session), B (`b123907`) and R, twice.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
scripts/gpu-call.sh .gpu/call11.tar.xz R
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
m=gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread
for c in "gt er-1M-d16 1 128" "gat er-1M-d16 4 64"; do
for b in H R; do
  set -- $c
  echo "=== $b $c"
  timeout 60 ncu --clock-control none --kernel-name regex:bwd --metrics $m /tmp/t/$b bench $1 --graph $2 --heads $3 --feat $4 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -E "^  [a-z_]+.*\(|gpu__time|dram__bytes|registers"
done
done > /tmp/o/ncu-bwd.txt
echo "== ncu done at $(($(date +%s) - start)) s" | tee -a /tmp/o/ncu-bwd.txt
cp /tmp/o/*.txt $OUT/
for round in 1 2; do
scripts/ab.sh -b $(( 300 + 110 * round - ($(date +%s) - start) )) 'H=/tmp/t/H' 'B=/tmp/t/B' 'R=/tmp/t/R' >> /tmp/o/ab.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 1 128 --schedule unfused
gt mol-16384 1 128
agnn mol-16384 1 128
gatv2 mol-16384 1 128
gat gt-as-22july06 4 64
gt gt-as-22july06 4 64
agnn gt-as-22july06 4 64
gt gt-pgp-strong-2009 4 64
gat er-1M-d16 1 128
gat er-1M-d16 4 64
gat pl-1M-d16 4 64
gt er-1M-d16 1 128
gt er-1M-d16 4 64
gt gt-email-Enron 8 32
gat gt-email-Enron 4 64
gat batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128
gatv2 er-1M-d16 4 64
agnn er-1M-d16 1 128
agnn cora 4 32
gt cora 4 32
CASES
cp /tmp/o/*.txt $OUT/
done
cat /tmp/o/ab.txt | tail -5
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
