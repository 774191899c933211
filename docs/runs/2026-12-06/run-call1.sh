#!/usr/bin/env bash
# Call 1 (twenty-second session): every GPU test and the main job on N (HEAD `ac8c506`'s device
# code, whose GAT gathering row pass capped at 64 registers never yet ran through the GPU tests,
# with the forced unfused backward after a fused forward: `PlanOptions::unfused_backward`,
# `--unfused-backward`, and its tests); on an H200, N on the issues' target cases (`auto`); then,
# on any GPU, `auto` (A), the fused forward with the unfused backward (X) and the `unfused`
# schedule (U) on graphs of short rows: mol-16384 1x128 is the one case of the sweep where `auto`
# trails a forced schedule (`unfused`) by more than 5 %.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt-targets  # the three graph-tool graphs of issue 10's targets
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call16.tar.xz N
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
low() {
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'A=/tmp/t/N' 'X=/tmp/t/N --unfused-backward true' 'U=/tmp/t/N --schedule unfused' > $OUT/low.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 4 64
gat mol-16384 8 32
gat mol-64K 1 128
gat mol-64K 4 64
gat er-1M-d2 1 128
gat er-1M-d2 4 64
gat er-1M-d4 1 128
gat er-256K-d2 1 128
gat er-64K-d2 1 128
gat pl-1M-d3 1 128
gat gt-as-22july06 1 128
gat mol-4K 1 128
gt mol-16384 1 128
agnn mol-16384 1 128
gatv2 mol-16384 1 128
gt er-1M-d2 1 128
gatv2 er-1M-d2 1 128
CASES
}
grep -q H200 /tmp/o/device.txt || { echo "not an H200: no targets"; low; echo "done at $(($(date +%s) - start)) s"; exit 0; }
scripts/ab.sh -b $(( 230 - ($(date +%s) - start) )) 'N=/tmp/t/N' > $OUT/targets.txt <<'CASES'
gt gt-email-Enron 4 64
gt gt-as-22july06 4 64
gt gt-pgp-strong-2009 4 64
gt cora 4 32
gt er-1M-d16 4 64
gt pl-1M-d16 4 64
gt er-1M-d16 1 128
gt batch-1024x120-d50 1 128
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
agnn er-1M-d16 4 64
agnn pl-1M-d16 4 64
agnn er-1M-d16 1 128
agnn batch-1024x120-d50 1 128
gat er-1M-d16 4 64
gat pl-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat gt-email-Enron 4 64
gat gt-as-22july06 4 64
gat gt-pgp-strong-2009 4 64
gat cora 4 32
CASES
low
echo "done at $(($(date +%s) - start)) s"
