#!/usr/bin/env bash
# Call 2 (thirteenth session): GAT's column pass over tiles in one sweep (a group of lanes per
# source node, dO_i read once per edge into registers). The GPU tests, the main job,
# compute-sanitizer on the new kernel, ncu's kernel times of GAT batch 1x128 forward+backward,
# and the timings against call 1's binary (old, `5092f12`) and --tiles off.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call2.tar.xz
for tool in memcheck racecheck synccheck initcheck; do
  for c in "gat 2 36" "gat 3 33" "gat 1 128" "gat 2 7"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
export DFGNN_BACKEND=cuda
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 100 ncu --clock-control none --metrics $m /tmp/t/F bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 \
  --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gat.txt 2>&1
echo "ncu rc=$?"
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'new=/tmp/t/F' 'old=/tmp/t/O' 'off=/tmp/t/F --tiles off' > /tmp/o/ab.txt <<'CASES'
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gat batch-1024x120-d50 8 32
gat batch-512x200-d60 4 64
gat batch-4096x30-d10 4 64
gat batch-1024x120-d20 1 128
gat mol-16384 1 128
gatv2 batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128
gt batch-1024x120-d20 1 128
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call2-out.tar.xz -C /tmp/o .
