#!/usr/bin/env bash
# Every GPU test at a99f0ed (FMA, 32-bit row offsets), and the main job.
set -uo pipefail
mkdir -p /tmp/t && tar xJf .gpu/tests6.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
date -u > $OUT/gpu-tests.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $OUT/gpu-tests.txt
timeout 330 scripts/gpu-tests.sh run /tmp/t/gpu-tests >> $OUT/gpu-tests.txt 2>&1; echo "gpu-tests rc=$?" >> $OUT/gpu-tests.txt
date -u >> $OUT/gpu-tests.txt
timeout 60 /tmp/t/dfgnn run --backend cuda --data-dir .gpu/data > $OUT/main-job.txt 2>&1; echo "main job rc=$?" >> $OUT/main-job.txt
