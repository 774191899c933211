#!/usr/bin/env bash
# Call 1 (nineteenth session): where GAT's backward goes on mol-16384 1x128 (auto against
# unfused) and er-1M-d16 1x128, and AGNN's forward on as-22july06 4x64: each kernel's time by ncu
# (H = `9391f88`, whose device code is HEAD's); then H on the issues' target cases.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
tar -xJf .gpu/call5.tar.xz -C /tmp/t ./H
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum
for c in "gat mol-16384 1 128 auto" "gat mol-16384 1 128 unfused" "gat er-1M-d16 1 128 auto" "agnn gt-as-22july06 4 64 auto" "gat gt-email-Enron 4 64 auto"; do
  set -- $c
  echo "=== $c"
  timeout 90 ncu --clock-control none --metrics $m /tmp/t/H bench $1 --graph $2 --heads $3 --feat $4 \
    --schedule $5 --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -vE "^==PROF==|^ +-+|Section|Metric Name" | grep -E "Context|dram__bytes|gpu__time|registers|warps_active" 
done > /tmp/o/ncu-kernels.txt
echo "== ncu done at $(($(date +%s) - start)) s" | tee -a /tmp/o/ncu-kernels.txt
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 480 - ($(date +%s) - start) )) 'H=/tmp/t/H' > /tmp/o/targets.txt <<'CASES'
agnn er-1M-d16 1 128
agnn gt-as-22july06 4 64
agnn cora 4 32
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat mol-16384 1 128
gat mol-16384 1 128 --schedule unfused
gt er-1M-d16 4 64
gt er-1M-d16 1 128
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
CASES
cat /tmp/o/targets.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
