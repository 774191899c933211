#!/usr/bin/env bash
# Call 4 (twenty-ninth session): call 3 with one A/B round, for the device time left: the TF32
# probe, every GPU test and the main job on T (`a671419`, branch `tc`), then F (`83dc96f`), D
# (`cf24a45`, branch `s28`) and T on the tensor cores side by side on the batch cases. Same archive
# as call 2.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
nvcc -O3 -arch=sm_90 -o /tmp/probe docs/runs/2026-12-06h/tf32-probe.cu > $OUT/probe.txt 2>&1 &&
  /tmp/probe >> $OUT/probe.txt 2>&1
echo "== probe rc=$? at $(($(date +%s) - start)) s"
scripts/gpu-call.sh .gpu/call2.tar.xz T
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== T tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128 --tiles edges
gt batch-1024x120-d50 4 64
CASES
scripts/ab.sh -b $(( 140 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'D=/tmp/t/D' 'TC=/tmp/t/T --tensor-cores true' < /tmp/o/cases > $OUT/ab1.txt
echo "done at $(($(date +%s) - start)) s"
