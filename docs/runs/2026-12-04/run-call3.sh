#!/usr/bin/env bash
# Call 3 (fifteenth session): the final build (F: AGNN's passes with their keys made from the
# values, capped as GT's; `CosineScore` now wraps GT's `DotScore`, which moved a few registers in
# AGNN's wider kernels) against `05d9326` (B). The GPU tests and the main job on F, then the A/B
# timings: AGNN's target cases, GT, GAT and GATv2 (whose kernels the template's new trait split
# recompiled), and AGNN under every schedule on the real graphs (`auto` against the best forced).
start=$(date +%s)
scripts/gpu-call.sh .gpu/call3.tar.xz F
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
TOOLS="memcheck racecheck" scripts/gpu-sanitize.sh /tmp/t/F gt-email-Enron 'agnn 2 256' 'agnn 8 64' > /dev/null
cat /tmp/o/sanitizer.txt
scripts/ab.sh -b $(( 420 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'B=/tmp/t/B' > /tmp/o/ab.txt <<'CASES'
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
agnn er-1M-d16 4 64
agnn er-1M-d16 1 128
agnn pl-1M-d16 4 64
agnn batch-1024x120-d50 1 128
gt er-1M-d16 4 64
gt gt-email-Enron 4 64
gat er-1M-d16 4 64
gat gt-email-Enron 4 64
gat batch-1024x120-d50 1 128
gatv2 er-1M-d16 4 64
gatv2 gt-email-Enron 4 64
gatv2 batch-1024x120-d50 1 128
agnn gt-email-Enron 4 64 --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused
agnn gt-as-22july06 4 64 --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused
agnn gt-pgp-strong-2009 4 64 --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused
agnn cora 4 32 --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused
agnn gt-cond-mat-2005 4 64 --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
tar -cJf $OUT/call3-out.tar.xz -C /tmp/o .
