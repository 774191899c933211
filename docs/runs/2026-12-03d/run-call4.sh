#!/usr/bin/env bash
# Call 4 (thirteenth session): F3, call 3's F2 with each edge's α computed first by a thread per
# edge (as the previous kernel did), so that a group of lanes per source node does only the
# vector work per edge. The GPU tests and the main job on F3, compute-sanitizer on its kernel,
# ncu's full set on it, and the timings of F3, F2 and call 1's binary (old, `5092f12`), and
# F3 --tiles off.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call4.tar.xz F3
for tool in memcheck racecheck synccheck initcheck; do
  for c in "gat 3 33" "gat 1 128" "gat 2 7"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F3 --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
export DFGNN_BACKEND=cuda
timeout 100 ncu --clock-control none --kernel-name regex:gat_tile_cols --launch-count 1 --set full /tmp/t/F3 bench gat \
  --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-full-cols-F3.txt 2>&1
echo "ncu F3 rc=$? $(grep -E '^    Duration' /tmp/o/ncu-full-cols-F3.txt)"
scripts/ab.sh -b $(( 420 - ($(date +%s) - start) )) 'F3=/tmp/t/F3' 'F2=/tmp/t/F2' 'old=/tmp/t/O' 'off=/tmp/t/F3 --tiles off' > /tmp/o/ab.txt <<'CASES'
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 8 32
gat batch-1024x120-d50 4 64
gat batch-512x200-d60 4 64
gat batch-4096x30-d10 4 64
gat batch-1024x120-d20 1 128
gat batch-1024x120-d50 2 7
gat batch-1024x120-d50 1 256
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 8 32
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call4-out.tar.xz -C /tmp/o .
