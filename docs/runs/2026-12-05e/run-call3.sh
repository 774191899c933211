#!/usr/bin/env bash
# Call 3 (twenty-first session): GAT's row pass capped at 64 registers instead of its 72 (G64: 16
# bytes spilled, 32 warps per SM instead of 28), and with its column pass at 56 instead of 64 as
# well (G56), against R (`cd5b53b`, main's device code), on graphs whose GAT backward runs the
# gathering row pass (mean degree under 6: no positive part) and one that does not.
start=$(date +%s)
. scripts/gpu-env.sh
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt-small  # the graph-tool graphs this call reads (the carry limit)
tar -xJf .gpu/call14.tar.xz -C /tmp/t
cp /tmp/o/device.txt $OUT/
scripts/ab.sh -b 150 'R=/tmp/t/R' 'G64=/tmp/t/G64' 'G56=/tmp/t/G56' >> $OUT/ab.txt <<'CASES'
gat mol-16384 1 128
gat gt-as-22july06 4 64
gat mol-16384 4 64
gat er-1M-d16 1 128
gat cora 4 32
gat mol-16384 1 128
gat gt-as-22july06 4 64
CASES
echo "done at $(($(date +%s) - start)) s"
