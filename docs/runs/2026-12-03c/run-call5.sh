#!/usr/bin/env bash
# Call 5 (twelfth session): the final build (call 4's kernels; per-edge tiles of the models that
# restate their maxima from 16 edges per staged row). The GPU tests, the main job, and auto
# against the previous commit's binary (old) and --tiles off.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call5.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
/tmp/t/F --backend cuda run > /tmp/o/main-job.txt 2>&1; echo "main job rc=$?" | tee -a /tmp/o/main-job.txt
export DFGNN_BACKEND=cuda
scripts/ab.sh -b $(( 170 - ($(date +%s) - start) )) 'new=/tmp/t/F' 'old=/tmp/t/O' 'off=/tmp/t/F --tiles off' > /tmp/o/ab.txt <<'CASES'
gt batch-1024x120-d20 1 128
gt batch-4096x30-d10 4 64
gatv2 batch-1024x120-d20 1 128
gat batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call5-out.tar.xz -C /tmp/o .
