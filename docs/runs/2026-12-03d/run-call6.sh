#!/usr/bin/env bash
# Call 6 (thirteenth session): the review's build (the column kernel stores dh through the tiles'
# shared `edges::store`; only the `gat_tile_cols_*` kernels' PTX changed). The GPU tests and the
# main job on it (F5), compute-sanitizer memcheck on its kernels, and F5 against call 5's F4.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call6.tar.xz F5
for c in "gat 3 33" "gat 1 128" "gat 2 7" "gat 2 32"; do
  set -- $c
  compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/t/F5 --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-memcheck-$1-$2x$3.txt 2>&1
  echo "compute-sanitizer memcheck $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY' /tmp/o/sanitizer-memcheck-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
done
export DFGNN_BACKEND=cuda
scripts/ab.sh -b $(( 150 - ($(date +%s) - start) )) 'F5=/tmp/t/F5' 'F4=/tmp/t/F4' > /tmp/o/ab.txt <<'CASES'
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 8 32
gat batch-1024x120-d50 4 64
gat batch-1024x120-d50 2 7
CASES
cat /tmp/o/ab.txt
tar -cJf $OUT/call6-out.tar.xz -C /tmp/o .
