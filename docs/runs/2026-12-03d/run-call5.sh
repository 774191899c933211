#!/usr/bin/env bash
# Call 5 (thirteenth session): F4, call 4's F3 compiled for 1, 2 or 4 feature quads per lane
# (`columns::lane_quads`), so that small F keeps fewer registers and more resident warps. The GPU
# tests and the main job on F4, compute-sanitizer on the three kernels, ncu's kernel times of GAT
# batch 1x128 and 8x32 forward+backward, and the timings of F4, F3 and call 1's binary (old,
# `5092f12`), and F4 --tiles off.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call5.tar.xz F4
for tool in memcheck racecheck synccheck initcheck; do
  for c in "gat 3 33" "gat 1 128" "gat 2 7" "gat 2 32"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F4 --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
export DFGNN_BACKEND=cuda
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for shape in "1 128" "8 32"; do
  set -- $shape
  timeout 100 ncu --clock-control none --metrics $m /tmp/t/F4 bench gat --graph batch-1024x120-d50 --heads $1 --feat $2 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gat-$1x$2.txt 2>&1
  echo "ncu $1x$2 rc=$?"
done
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'F4=/tmp/t/F4' 'F3=/tmp/t/F3' 'old=/tmp/t/O' 'off=/tmp/t/F4 --tiles off' > /tmp/o/ab.txt <<'CASES'
gat batch-1024x120-d50 8 32
gat batch-4096x30-d10 4 64
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gat batch-512x200-d60 4 64
gat batch-1024x120-d20 1 128
gat batch-1024x120-d50 2 7
gat batch-1024x120-d50 1 256
gat mol-16384 1 128
gat er-1M-d16 4 64
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call5-out.tar.xz -C /tmp/o .
