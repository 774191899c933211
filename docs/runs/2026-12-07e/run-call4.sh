#!/usr/bin/env bash
# Call 4 (thirty-fourth session): every GPU test and the main job on Q1 (the closed blocks'
# gradient sums over quads of 4 consecutive nodes a thread, one 16-byte load of the matrix per
# quad: `column_sums` 3 shared loads per 16 multiply-adds, was 5; same sums in the same order, so
# the same bits), then N (HEAD `eea2178`'s device code) against Q1 on the cases whose backward
# runs over closed blocks, two rounds in opposite orders, then ncu of `gt_blocks_bwd_w4` on Q1
# and N while time is left (details and SASS source pages in one archive). The archive
# `.gpu/callq1.tar.xz`: at Q1 `cargo build --release -p dfgnn-cli`, `target/release/dfgnn` copied to `.gpu/build/Q1/`,
# `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; in `.gpu/build`, `tar -cf - gpu-tests Q1 |
# xz -6 -T2 > ../callq1.tar.xz`. N from `.gpu/callr.tar.xz` (call 1's header). Q3 in the A/B too:
# Q1 with the row sums two quads an iteration (same bits), `.gpu/callq3.tar.xz` (`tar -cf - Q3 |
# xz`). Q1 is branch `quads`, Q3 branch `quads2`.
# Carry: .gpu/callq1.tar.xz, .gpu/callq3.tar.xz, .gpu/callr.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
tar -xJf .gpu/callq3.tar.xz -C /tmp/t
scripts/gpu-call.sh .gpu/callq1.tar.xz Q1/dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== Q1 tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
CASES
scripts/ab.sh -b $(( 170 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'Q1=/tmp/t/Q1/dfgnn' 'Q3=/tmp/t/Q3/dfgnn' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 250 - ($(date +%s) - start) )) 'Q3=/tmp/t/Q3/dfgnn' 'Q1=/tmp/t/Q1/dfgnn' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
mkdir -p /tmp/o/ncu
k=gt_blocks_bwd_w4
for b in Q1/dfgnn N; do
  name=${b%%/*}
  left=$(( 380 - ($(date +%s) - start) ))
  ((left > 30)) || break
  timeout $left ncu --clock-control none --import-source no --kernel-name $k -c 1 \
    --set full --section SourceCounters \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$name /tmp/t/$b bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu/ncu-$name.log 2>&1
  ncu -i /tmp/o/$name.ncu-rep --print-details all > /tmp/o/ncu/ncu-$name.txt 2>&1
  ncu -i /tmp/o/$name.ncu-rep --page source --csv --print-source sass | gzip > /tmp/o/ncu/sass-$name.csv.gz
  echo "ncu of $name done at $(($(date +%s) - start)) s"
done
tar -C /tmp/o -cJf $OUT/ncu.tar.xz ncu
