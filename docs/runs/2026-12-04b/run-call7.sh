#!/usr/bin/env bash
# Call 7 (sixteenth session): every GPU test and the main job on the final build (GT's forward
# capped at 64 registers on top of `c77fba4`).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
scripts/gpu-call.sh .gpu/call7.tar.xz dfgnn
cp /tmp/o/gpu-tests.txt $OUT/gpu-tests-call7.txt; cp /tmp/o/main-job.txt $OUT/main-job-call7.txt
