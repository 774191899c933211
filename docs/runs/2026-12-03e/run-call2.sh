#!/usr/bin/env bash
# Call 2 (fourteenth session): call 1's F1 was slower (a butterfly per edge, one edge at a time:
# latency-bound). F2 takes 8 edges per group at a time and sums them by a transposed butterfly
# (`reduce::sum_scattered`), 100 registers (2 blocks per SM); F3 the same with packed edges in
# registers, 80 (3 blocks per SM). The GPU tests and the main job on F3, compute-sanitizer over
# its per-edge tile kernels, ncu's kernel times of GATv2's batch forward, and the A/B timings
# of F3, F2 and `0beebc7` (O).
start=$(date +%s)
scripts/gpu-call.sh .gpu/call2.tar.xz F3
for tool in memcheck racecheck synccheck; do
  for c in "gatv2 3 33" "gatv2 1 128" "gt 2 7"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F3 --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
export DFGNN_BACKEND=cuda
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for b in F3 F2; do
  timeout 60 ncu --clock-control none --metrics $m /tmp/t/$b bench gatv2 --graph batch-1024x120-d50 --heads 1 --feat 128 \
    --schedule auto --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gatv2-$b.txt 2>&1
  echo "ncu $b rc=$? $(grep -A9 'gatv2_tile_edges_fwd_w4 (' /tmp/o/ncu-times-gatv2-$b.txt | grep -E 'duration|registers|warps_active' | tr -s ' ' | tr '\n' ' ')"
done
scripts/ab.sh -b $(( 270 - ($(date +%s) - start) )) 'F3=/tmp/t/F3' 'F2=/tmp/t/F2' 'old=/tmp/t/O' > /tmp/o/ab.txt <<'CASES'
gatv2 batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128 --tiles edges
gatv2 batch-1024x120-d50 4 64
gatv2 batch-1024x120-d50 2 7
gatv2 batch-512x200-d60 4 64
gatv2 batch-1024x120-d50 8 32
gatv2 batch-1024x120-d50 1 256
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call2-out.tar.xz -C /tmp/o .
