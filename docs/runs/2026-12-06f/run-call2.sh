#!/usr/bin/env bash
# Call 2 (twenty-seventh session): every GPU test and the main job on W, then X (`d543740`), Y (the
# closed-block backward with one copy of its loops per count of groups and pairs, nodes rounded to
# 32 in the gradients), Z (Y and the per-edge tiles' aggregation at 4 threads per row, two quads
# each) and W (Z and the dense forward's score products, one copy per count of source groups)
# timed side by side, two rounds in opposite orders; on an H200 also the issues' target cases on W.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call2.tar.xz W
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== W tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gatv2 batch-1024x120-d50 1 128
gt mol-16384 1 128
gat mol-16384 1 128
gatv2 mol-16384 4 64
gt batch-4096x30-d10 4 64
gat batch-4096x30-d10 4 64
gt batch-512x200-d60 1 128
CASES
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'X=/tmp/t/X' 'Y=/tmp/t/Y' 'Z=/tmp/t/Z' 'W=/tmp/t/W' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b $(( 480 - ($(date +%s) - start) )) 'W=/tmp/t/W' > $OUT/targets.txt <<'TARGETS'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gt gt-email-Enron 4 64
gt gt-as-22july06 4 64
gt gt-pgp-strong-2009 4 64
gt cora 4 32
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
gat gt-email-Enron 4 64
gat gt-as-22july06 4 64
gat gt-pgp-strong-2009 4 64
gat cora 4 32
gt er-1M-d16 4 64
gt pl-1M-d16 4 64
gt er-1M-d16 1 128
agnn er-1M-d16 4 64
agnn pl-1M-d16 4 64
agnn er-1M-d16 1 128
gat er-1M-d16 4 64
gat pl-1M-d16 4 64
gat er-1M-d16 1 128
TARGETS
echo "== targets done at $(($(date +%s) - start)) s"
fi
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'W=/tmp/t/W' 'Z=/tmp/t/Z' 'Y=/tmp/t/Y' 'X=/tmp/t/X' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
