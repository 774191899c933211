#!/usr/bin/env bash
# Call 1 (twelfth session): the backward column pass over tiles of the CSC (GT, AGNN, GAT). The
# GPU tests, compute-sanitizer on the new kernels, the main job, and the timings: this build (new)
# against the previous commit's binary (old: forward tiles, fused column pass) and --tiles off.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call1.tar.xz -C /tmp/t
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/o/gpu.txt
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
for tool in memcheck racecheck synccheck initcheck; do
  for c in "gat 2 36" "gat 3 33" "gt 2 36" "gt 3 33"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
/tmp/t/F --backend cuda run > /tmp/o/main-job.txt 2>&1; echo "main job rc=$?" | tee -a /tmp/o/main-job.txt
export DFGNN_BACKEND=cuda
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) 'new=/tmp/t/F' 'old=/tmp/t/O' 'off=/tmp/t/F --tiles off' > /tmp/o/ab.txt <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d20 1 128
gt batch-4096x30-d10 4 64
gt batch-512x200-d60 4 64
gt mol-16384 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gat batch-1024x120-d50 8 32
gat batch-1024x120-d20 1 128
gat batch-4096x30-d10 4 64
gat batch-512x200-d60 4 64
gat mol-16384 1 128
CASES
printf 'gat mol-16384 1 128 --tiles edges\ngt mol-16384 1 128 --tiles edges\ngat batch-1024x120-d10 1 128 --tiles edges\ngt batch-1024x120-d10 1 128 --tiles edges\n' | scripts/ab.sh -b 60 'new=/tmp/t/F' 'old=/tmp/t/O' >> /tmp/o/ab.txt
cat /tmp/o/ab.txt
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
