#!/usr/bin/env bash
# Call 2 (thirty-fourth session): every GPU test and the main job on B1 (the closed blocks'
# backward in 512-thread blocks capped at 128 registers: the pair products over rows of a 32 × 16
# grid, the gradients by two halves of 16 × 16, dv's rows split between them, dq by one and dk by
# the other), then N (HEAD `eea2178`'s device code, built at `4389ecc`) against B1 on the cases
# whose backward runs over closed blocks, two rounds in opposite orders, then ncu of
# `gt_blocks_bwd_w4` on both (stall reasons, SASS source page). The archive `.gpu/callb.tar.xz`:
# at B1 `cargo build --release -p dfgnn-cli`, `target/release/dfgnn` copied to `.gpu/build/B1/`,
# `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; in `.gpu/build`, `tar -cf - gpu-tests B1 |
# xz -6 -T2 > ../callb.tar.xz`. N from `.gpu/callr.tar.xz` (call 1's header). B2 (`.gpu/callb2.tar.xz`,
# packed the same way): B1 with the blocks' staging loop unrolled (`stage_async::<WIDE, false>`),
# in the A/B only. B1's code is branch `blocks512`.
# Carry: .gpu/callb.tar.xz, .gpu/callb2.tar.xz, .gpu/callr.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
tar -xJf .gpu/callb2.tar.xz -C /tmp/t
scripts/gpu-call.sh .gpu/callb.tar.xz B1/dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== B1 tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d50 2 50
gt mol-16384 1 128
gt batch-1024x120-d20 1 128 --tiles dense --block-backward true
CASES
scripts/ab.sh -b $(( 230 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'B1=/tmp/t/B1/dfgnn' 'B2=/tmp/t/B2/dfgnn' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 390 - ($(date +%s) - start) )) 'B2=/tmp/t/B2/dfgnn' 'B1=/tmp/t/B1/dfgnn' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
k=gt_blocks_bwd_w4
for b in B1/dfgnn N; do
  name=${b%%/*}
  timeout $(( 560 - ($(date +%s) - start) )) ncu --clock-control none --import-source no --kernel-name $k -c 1 \
    --set full --section SourceCounters \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$name /tmp/t/$b bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$name.log 2>&1
  ncu -i /tmp/o/$name.ncu-rep --print-details all > $OUT/ncu-$name.txt 2>&1
  ncu -i /tmp/o/$name.ncu-rep --page source --csv --print-source sass | gzip > $OUT/sass-$name.csv.gz
  echo "ncu of $name done at $(($(date +%s) - start)) s"
done
