#!/usr/bin/env bash
# Call 4 (eighteenth session): GAT's W4 S1 kernels at twice the edges per step and 96 registers
# (S: `9391f88` with docs/runs/2026-12-05b/gat-step8-cap96.patch applied, both the plain and the
# dropout tables) against H (`9391f88`), with and without attention dropout (bench --dropout).
start=$(date +%s)
mkdir -p /tmp/t /tmp/o .gpu/data && ln -sfn "$PWD/.gpu/graph-tool" .gpu/data/graph-tool
tar -xJf .gpu/call5.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/ab-steps.txt
scripts/ab.sh -b 200 'H=/tmp/t/H' 'S=/tmp/t/S' >> /tmp/o/ab-steps.txt <<'CASES'
gat er-1M-d16 4 64 --dropout 0.5
gat er-1M-d16 4 64
gat er-1M-d16 1 128 --dropout 0.5
gat batch-1024x120-d50 1 128 --dropout 0.5
gat mol-16384 1 128 --dropout 0.5
gat gt-email-Enron 4 64 --dropout 0.5
gat mol-16384 1 128
gat gt-email-Enron 4 64
gat er-1M-d16 1 128
CASES
cat /tmp/o/ab-steps.txt
cp /tmp/o/*.txt $OUT/
