#!/usr/bin/env bash
# Call 1 (twenty-fifth session): K, GT's backward over closed blocks (kernels/tiles/blocks.rs),
# against the same binary with the blocks forbidden (`--block-backward false`: the forward over
# dense tiles restating its maxima, then the row and column passes, as HEAD `3863b64` plans it);
# first every GPU test and the main job on K's build.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call1.tar.xz K
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d50 8 32
gt batch-1024x120-d50 1 100
gt batch-1024x120-d20 1 128 --tiles dense
gt batch-4096x30-d10 4 64 --tiles dense
CASES
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'off=/tmp/t/K --block-backward false' 'on=/tmp/t/K --block-backward true' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 420 - ($(date +%s) - start) )) 'on=/tmp/t/K --block-backward true' 'off=/tmp/t/K --block-backward false' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
