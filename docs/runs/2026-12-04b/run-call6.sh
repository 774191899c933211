#!/usr/bin/env bash
# Call 6 (sixteenth session): GT's and AGNN's forward capped at 64 registers instead of 56 (G64),
# as GATv2's now is, against `e828bab` (E), on GT's and AGNN's target cases and the molecules.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
tar -xJf .gpu/call6.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
scripts/ab.sh -b $(( 240 - ($(date +%s) - start) )) 'E=/tmp/t/E' 'G64=/tmp/t/G64' > /tmp/o/ab.txt <<'CASES'
gt mol-16384 1 128
gt er-1M-d16 4 64
gt er-1M-d16 1 128
gt pl-1M-d16 4 64
gt gt-email-Enron 4 64
gt gt-as-22july06 4 64
gt cora 4 32
agnn er-1M-d16 1 128
agnn gt-as-22july06 4 64
agnn mol-16384 1 128
gt er-1M-d16 4 64
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/ab.txt $OUT/ab-call6.txt
