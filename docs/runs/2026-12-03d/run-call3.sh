#!/usr/bin/env bash
# Call 3 (thirteenth session): two designs of GAT's one-sweep column pass over tiles, both with
# at least 8 lanes per source node (call 2's 2-lane groups at F = 32 conflicted in the banks) and
# capped at 128 registers: F1 takes each edge's dO_i·h_j by a butterfly over its group; F2 sums
# Σ c_ij·dO_i instead and takes one dot product with h_j per source node (no butterfly per edge).
# The GPU tests and the main job on F2, compute-sanitizer on F2's kernel, ncu's full set on both
# kernels, and the timings of F2, F1 and call 1's binary (old, `5092f12`).
start=$(date +%s)
scripts/gpu-call.sh .gpu/call3.tar.xz F2
for tool in memcheck racecheck synccheck initcheck; do
  for c in "gat 2 36" "gat 3 33" "gat 1 128" "gat 2 7"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F2 --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
export DFGNN_BACKEND=cuda
for b in F1 F2; do
  timeout 100 ncu --clock-control none --kernel-name regex:gat_tile_cols --launch-count 1 --set full /tmp/t/$b bench gat \
    --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-full-cols-$b.txt 2>&1
  echo "ncu $b rc=$? $(grep -E '^    Duration' /tmp/o/ncu-full-cols-$b.txt)"
done
scripts/ab.sh -b $(( 330 - ($(date +%s) - start) )) 'F2=/tmp/t/F2' 'F1=/tmp/t/F1' 'old=/tmp/t/O' > /tmp/o/ab.txt <<'CASES'
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 8 32
gat batch-1024x120-d50 4 64
gat batch-512x200-d60 4 64
gat batch-1024x120-d20 1 128
gat batch-4096x30-d10 4 64
gat batch-1024x120-d50 2 7
gat batch-1024x120-d50 1 256
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call3-out.tar.xz -C /tmp/o .
