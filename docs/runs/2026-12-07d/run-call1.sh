#!/usr/bin/env bash
# Call 1 (thirty-third session): every GPU test and the main job on U (`ccbc2ec`: the tiles'
# staging loop stepping each thread's words by adds; it also carries the thirty-second session's
# `a1a78d8`, GAT's node kernels at 8 lanes a row, whose GPU tests had not run), then T
# (`d8c15a2`, U's parent) against U on the cases that stage tiles, two rounds in opposite orders,
# then ncu on U, GT batch-1024x120-d50 1×128: the dense tile forward's stall reasons, instruction
# mix and SASS source page (for docs/runs/2026-12-06e/sass-regions.py). The archive
# `.gpu/callu1.tar.xz`: at each commit `cargo build --release -p dfgnn-cli`,
# `target/release/dfgnn` copied to `.gpu/build/T` or `U`; at U `scripts/gpu-tests.sh build
# .gpu/build/gpu-tests`; in `.gpu/build`, `tar -cf - gpu-tests T U | xz -6 -T2 > ../callu1.tar.xz`.
# Carry: .gpu/callu1.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/callu1.tar.xz U/dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== U tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gat batch-1024x120-d50 1 128
gatv2 batch-1024x120-d50 1 128
gt batch-512x200-d60 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gt batch-1024x120-d20 1 128
CASES
scripts/ab.sh -b $(( 250 - ($(date +%s) - start) )) 'T=/tmp/t/T/dfgnn' 'U=/tmp/t/U/dfgnn' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'U=/tmp/t/U/dfgnn' 'T=/tmp/t/T/dfgnn' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
k=gt_tiles_fwd_w4
timeout $(( 540 - ($(date +%s) - start) )) ncu --clock-control none --import-source no --kernel-name $k -c 1 \
  --set full --section SourceCounters \
  --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
  -o /tmp/o/$k /tmp/t/U/dfgnn bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
  --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$k.log 2>&1
ncu -i /tmp/o/$k.ncu-rep --print-details all > $OUT/ncu-$k.txt 2>&1
ncu -i /tmp/o/$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/sass-$k.csv.gz
echo "done at $(($(date +%s) - start)) s"
