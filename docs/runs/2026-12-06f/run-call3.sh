#!/usr/bin/env bash
# Call 3 (twenty-seventh session): every GPU test and the main job on F (the tree to land: call 2's
# Y and W without Z's aggregation, the edge kernels' PTX X's byte for byte), then F against X
# (`d543740`), two rounds in opposite orders; on an H200 also the issues' target cases on F.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call3.tar.xz F
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== F tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gatv2 batch-1024x120-d50 1 128
gt batch-512x200-d60 1 128
gt batch-1024x120-d20 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gt batch-4096x30-d10 4 64
CASES
scripts/ab.sh -b $(( 200 - ($(date +%s) - start) )) 'X=/tmp/t/X' 'F=/tmp/t/F' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b $(( 420 - ($(date +%s) - start) )) 'F=/tmp/t/F' > $OUT/targets.txt <<'TARGETS'
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
scripts/ab.sh -b $(( 480 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'X=/tmp/t/X' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
