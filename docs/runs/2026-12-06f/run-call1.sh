#!/usr/bin/env bash
# Call 1 (twenty-seventh session): every GPU test and the main job on X (`d543740`, the review of
# the cp.async staging: code order only), then the GPU tests on R3 (X with the dense forward's
# products over the tile's groups of 16 rows in use, `0d26dfd` revived), then X /
# R3 timed side by side; on an H200 also the issues' target cases on X.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call1.tar.xz X
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== X tests done at $(($(date +%s) - start)) s"
scripts/gpu-tests.sh run /tmp/t/rg > $OUT/gpu-tests-rg.txt 2>&1
echo "R3 gpu-tests rc=$? at $(($(date +%s) - start)) s" | tee -a $OUT/gpu-tests-rg.txt
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gt batch-512x200-d60 1 128 --tiles dense
gt batch-1024x120-d20 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gt batch-4096x30-d10 4 64
CASES
scripts/ab.sh -b $(( 330 - ($(date +%s) - start) )) 'X=/tmp/t/X' 'R3=/tmp/t/R3' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b $(( 500 - ($(date +%s) - start) )) 'X=/tmp/t/X' > $OUT/targets.txt <<'TARGETS'
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
scripts/ab.sh -b $(( 570 - ($(date +%s) - start) )) 'R3=/tmp/t/R3' 'X=/tmp/t/X' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
