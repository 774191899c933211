#!/usr/bin/env bash
# Call 4 (twelfth session): as call 3, the maxima restated by groups of a head's lanes (several
# rows at once per block, 16-byte loads) instead of a warp per row, after call 3 found the
# multi-head cases slowed; GAT's column tiles. The GPU tests, compute-sanitizer, the
# main job, and the timings against the previous commit's binary (old) and --tiles off.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call4.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
for tool in memcheck racecheck synccheck; do
  for c in "gt 2 36 dense" "gt 3 33 edges" "gatv2 3 33 edges" "gat 2 36 edges"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles $4 --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 $4 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
/tmp/t/F --backend cuda run > /tmp/o/main-job.txt 2>&1; echo "main job rc=$?" | tee -a /tmp/o/main-job.txt
export DFGNN_BACKEND=cuda
scripts/ab.sh -b $(( 500 - ($(date +%s) - start) )) 'new=/tmp/t/F' 'old=/tmp/t/O' 'off=/tmp/t/F --tiles off' > /tmp/o/ab.txt <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d20 1 128
gt batch-4096x30-d10 4 64
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gat batch-4096x30-d10 4 64
gatv2 batch-1024x120-d50 1 128
gatv2 batch-1024x120-d50 4 64
gt mol-16384 1 128
gt batch-512x200-d60 4 64
gt batch-1024x120-d50 8 32
gatv2 batch-1024x120-d20 1 128
gt er-1M-d16 4 64
gatv2 er-1M-d16 4 64
gat er-1M-d16 4 64
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call4-out.tar.xz -C /tmp/o .
