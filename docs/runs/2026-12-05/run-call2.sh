#!/usr/bin/env bash
# Call 2 (seventeenth session; no H200 could be started, so on an H100 like call 1): the GPU tests
# and the main job on F2 (`82aa186`: the positive part planned by mean degree); GAT's W4 S1 kernels
# with twice the edges per step (forward 8, backward 4), capped at 96 (S96) or 80 (S80) registers
# instead of 64/72/64, against F (`52f0059` plus the --positive-part option, part on); GAT with
# the planner's choice (F2), the positive part forced on, and forced off.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o .gpu/data && ln -sfn "$PWD/.gpu/graph-tool" .gpu/data/graph-tool
scripts/gpu-call.sh .gpu/call2.tar.xz F2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu-call done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 220 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'S96=/tmp/t/S96' 'S80=/tmp/t/S80' > /tmp/o/ab-gat-step.txt <<'CASES'
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat pl-1M-d16 4 64
gat batch-1024x120-d50 1 128
gat mol-16384 1 128
gat gt-email-Enron 4 64
CASES
cat /tmp/o/ab-gat-step.txt
echo "== gat steps done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 340 - ($(date +%s) - start) )) 'F2=/tmp/t/F2' 'on=/tmp/t/F2 --positive-part true' 'off=/tmp/t/F2 --positive-part false' > /tmp/o/ab-gat-part.txt <<'CASES'
gat gt-pgp-strong-2009 4 64
gat gt-cond-mat-2005 4 64
gat gt-hep-th 4 64
gat gt-power 4 64
gat gt-astro-ph 4 64
gat gt-as-22july06 1 128
gat gt-cond-mat-2005 1 128
gat batch-4096x30-d10 4 64
gat mol-16384 1 128
CASES
cat /tmp/o/ab-gat-part.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
