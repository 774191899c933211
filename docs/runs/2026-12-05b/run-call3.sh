#!/usr/bin/env bash
# Call 3 (eighteenth session), for H200 figures if one starts: N = `798da65` (call 2's binary)
# against F2 = `82aa186` (the seventeenth session's last device change) on the issues' cases.
start=$(date +%s)
mkdir -p /tmp/t /tmp/t2 /tmp/o .gpu/data && ln -sfn "$PWD/.gpu/graph-tool" .gpu/data/graph-tool
tar -xJf .gpu/call4.tar.xz -C /tmp/t ./N
tar -xJf .gpu/call2.tar.xz -C /tmp/t2 ./F2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/ab-h200.txt
scripts/ab.sh -b 380 'F2=/tmp/t2/F2' 'N=/tmp/t/N' >> /tmp/o/ab-h200.txt <<'CASES'
agnn er-1M-d16 1 128
agnn gt-as-22july06 4 64
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat mol-16384 1 128
agnn batch-1024x120-d50 1 128
gt er-1M-d16 4 64
CASES
cat /tmp/o/ab-h200.txt
cp /tmp/o/*.txt $OUT/
