#!/usr/bin/env bash
# Call 3 (nineteenth session): the GPU tests and the main job on C4 (the working tree after
# `9f814e4`: the forward combine's maximum in four running maxima and its sums in one loop); A/B
# of R (~`9f814e4`: GAT's row pass factored), C4 and C8 (C4 with eight partials in flight) where
# rows are split; then C4 on the issues' target cases; H (`9391f88`) against R where GAT's row
# pass takes two slots (F = 256), last.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
scripts/gpu-call.sh .gpu/call7.tar.xz C4
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 220 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'C4=/tmp/t/C4' 'C8=/tmp/t/C8' > /tmp/o/ab.txt <<'CASES'
agnn gt-as-22july06 4 64
gt gt-as-22july06 4 64
gat gt-email-Enron 4 64
agnn gt-email-Enron 4 64
agnn cora 4 32
gt gt-pgp-strong-2009 4 64
CASES
cp /tmp/o/*.txt $OUT/
echo "== A/B done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) 'C4=/tmp/t/C4' > /tmp/o/targets.txt <<'CASES'
agnn er-1M-d16 1 128
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat pl-1M-d16 4 64
gt er-1M-d16 4 64
gt er-1M-d16 1 128
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt cora 4 32
gat mol-16384 1 128
gat mol-16384 1 128 --schedule unfused
agnn er-1M-d16 4 64
gt pl-1M-d16 4 64
CASES
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'H=/tmp/t/H' 'R=/tmp/t/R' >> /tmp/o/ab.txt <<'CASES'
gat gt-email-Enron 1 256
CASES
cat /tmp/o/ab.txt /tmp/o/targets.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
