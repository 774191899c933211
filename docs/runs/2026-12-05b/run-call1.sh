#!/usr/bin/env bash
# Call 1 (eighteenth session), on the seventeenth session's archive (`.gpu/call2.tar.xz`, built
# for its never-run call 2): A = `aa62668`, F = `52f0059` + --positive-part, F2 = `82aa186`
# (AGNN's fused normalisation backward, GAT's positive part by degree), S96 / S80 = F with GAT's
# W4 S1 kernels at twice the edges per step capped at 96 / 80 registers. The GPU tests and the
# main job on F2, then AGNN A against F2 on the issue-10 cases (the H200 figures the seventeenth
# session could not take), GAT's step variants, and GAT's positive part on the graphs of mean
# degree 7-9 that set MIN_PART_DEGREE.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o .gpu/data && ln -sfn "$PWD/.gpu/graph-tool" .gpu/data/graph-tool
scripts/gpu-call.sh .gpu/call2.tar.xz F2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu-call done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 230 - ($(date +%s) - start) )) 'A=/tmp/t/A' 'F2=/tmp/t/F2' > /tmp/o/ab-agnn.txt <<'CASES'
agnn er-1M-d16 1 128
agnn er-1M-d16 4 64
agnn pl-1M-d16 4 64
agnn gt-as-22july06 4 64
agnn gt-email-Enron 4 64
agnn gt-pgp-strong-2009 4 64
agnn batch-1024x120-d50 1 128
gt er-1M-d16 4 64
gt er-1M-d16 1 128
CASES
cat /tmp/o/ab-agnn.txt
echo "== agnn done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'S96=/tmp/t/S96' 'S80=/tmp/t/S80' > /tmp/o/ab-gat-step.txt <<'CASES'
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat mol-16384 1 128
gat pl-1M-d16 4 64
gat gt-email-Enron 4 64
CASES
cat /tmp/o/ab-gat-step.txt
echo "== gat steps done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 530 - ($(date +%s) - start) )) 'on=/tmp/t/F2 --positive-part true' 'off=/tmp/t/F2 --positive-part false' > /tmp/o/ab-gat-part.txt <<'CASES'
gat gt-pgp-strong-2009 4 64
gat gt-cond-mat-2005 4 64
gat gt-as-22july06 4 64
gat gt-astro-ph 4 64
gat gt-email-Enron 4 64
gat gt-hep-th 4 64
gat gt-power 4 64
gat batch-4096x30-d10 4 64
gat mol-16384 1 128
CASES
cat /tmp/o/ab-gat-part.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
