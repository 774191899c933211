#!/usr/bin/env bash
# Call 4 (twenty-seventh session; not run: no machine came before the device time ran out):
# every GPU test and the main job on G (`dc214bb`: F with GAT's per-edge tile forward launched
# with the shared memory it uses, no query or key chunk, so four blocks fit a multiprocessor on
# the batch instead of three), then F against G, two rounds in opposite orders; on an H200 also
# the issues' target cases on G. G is built from `dc214bb`, F from `83dc96f` (call 3).
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call4.tar.xz G
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== G tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gat batch-4096x30-d10 4 64
gat mol-16384 1 128 --tiles edges
gat batch-1024x120-d20 1 128
gt batch-1024x120-d50 1 128
CASES
scripts/ab.sh -b $(( 150 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'G=/tmp/t/G' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'G=/tmp/t/G' < scripts/target-cases.txt > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
fi
scripts/ab.sh -b $(( 440 - ($(date +%s) - start) )) 'G=/tmp/t/G' 'F=/tmp/t/F' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
