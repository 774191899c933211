#!/usr/bin/env bash
# Call 5 (twenty-sixth session): C, the dense tile forward's products over the tile's groups of 16
# rows in use only (one of four copies of the score and value loops; a graph's last tile often
# holds a few rows), against B (call 4's build); first every GPU test and the main job on C.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call5.tar.xz C
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d50 8 32
agnn batch-1024x120-d50 1 128
gt batch-512x200-d60 1 128 --tiles dense
gt batch-1024x120-d20 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gt batch-4096x30-d10 4 64 --tiles dense
CASES
scripts/ab.sh -b $(( 150 - ($(date +%s) - start) )) 'B=/tmp/t/B' 'C=/tmp/t/C' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 230 - ($(date +%s) - start) )) 'C=/tmp/t/C' 'B=/tmp/t/B' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
