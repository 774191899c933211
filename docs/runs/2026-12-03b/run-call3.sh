#!/usr/bin/env bash
# Call 3: the review's TileList parameters (253b685): the GPU tests, the main job, and auto on
# the tiled batches once more (same commands as call 2).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call3.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$?" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
/tmp/t/F --backend cuda run > /tmp/o/main-job.txt 2>&1; echo "main job rc=$?" | tee -a /tmp/o/main-job.txt
export DFGNN_BACKEND=cuda
for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d20 1 128" "gat batch-1024x120-d50 1 128" "gatv2 batch-1024x120-d50 1 128"; do
  set -- $c
  echo "auto $* | $(timeout 90 /tmp/t/F bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 2>&1 | grep -E '^auto |error' | tr '\n' ' ')" >> /tmp/o/ab.txt
done
cat /tmp/o/ab.txt
tar -cJf $OUT/call3-out.tar.xz -C /tmp/o .
