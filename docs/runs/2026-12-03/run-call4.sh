#!/usr/bin/env bash
# Call 4: the GPU tests of V3, then three versions of the dense-tile kernel in one call:
# B2 (call 2's: 32-feature chunks staged between barriers), V3 (16-feature score chunks, each
# chunk's successor loaded into registers while the block computes, warp-level skipping of row
# groups past the tile; 312 B spilled), V4b (V3 without the prefetch and skipping in the score
# phase; 208 B spilled). Each against --dense-tiles false of the same binary; then stall reasons
# (ncu) of V3's kernel.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call4.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
export DFGNN_BACKEND=cuda
run() { # label binary extra-args model graph heads feat
  local label=$1 bin=$2 extra=$3; shift 3
  [ "$(left 420)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  r=$(timeout 90 /tmp/t/$bin bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 $extra 2>&1 | grep -E '^auto|error' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d50 8 32" "gt batch-512x200-d60 4 64" "gt batch-1024x120-d20 1 128" "gt batch-1024x120-d50 2 33"; do
    for bin in B2 V3 V4b; do run $bin $bin "--dense-tiles true" $c; done
    run off V3 "--dense-tiles false" $c
  done
  echo "round $round done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
done
ncu --clock-control none --kernel-name regex:gt_tiles --launch-count 1 --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --print-details all \
  /tmp/t/V3 bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-v3-stalls.txt 2>&1
grep -iE "stall|Duration|Issued|Eligible" /tmp/o/ncu-v3-stalls.txt | head -40
sed -E 's/\| schedule .*plan auto +/| /' /tmp/o/ab.txt
tar -cJf $OUT/call4-out.tar.xz -C /tmp/o .
