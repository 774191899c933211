#!/usr/bin/env bash
# Call 3 (thirty-fifth session): every GPU test and the main job on M (branch `made`: AGNN's keys
# and queries made from the features and inverse norms while the tiles and closed blocks stage
# them, so its normalisation writes neither `hn` nor `q`; the same bits on the emulator), then
# N (HEAD `eea2178`'s device code) against M, two rounds in opposite orders: AGNN and GT (whose
# tile kernels gained the branch) on the batch graph. `.gpu/callm2.tar.xz`: at M `cargo build
# --release -p dfgnn-cli` copied to `.gpu/build/M/`, `scripts/gpu-tests.sh build
# .gpu/build/gpu-tests`, both stripped, `tar -cf - gpu-tests M | xz -9 -T2` in `.gpu/build`.
# Carry: .gpu/callm2.tar.xz, .gpu/callr.tar.xz, .gpu/planetoid (and the ncu below).
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
scripts/gpu-call.sh .gpu/callm2.tar.xz M/dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== M tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 4 64
gt batch-1024x120-d50 4 64
agnn mol-16384 1 128
CASES
scripts/ab.sh -b $(( 150 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'M=/tmp/t/M/dfgnn' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 215 - ($(date +%s) - start) )) 'M=/tmp/t/M/dfgnn' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
# Then, while time is left, ncu of GATv2's forward (`gatv2_fwd_w4_s1`) on er-1M-d16 1×128, where
# turbo-gnn's forward was faster in call 1, and of GT's (`gt_fwd_w4_s1`) on the same graph, on N.
mkdir -p /tmp/o/ncu
for mk in "gatv2 gatv2_fwd_w4_s1" "gt gt_fwd_w4_s1"; do
  set -- $mk
  left=$(( 295 - ($(date +%s) - start) ))
  ((left > 60)) || break
  timeout $left ncu --clock-control none --import-source no --kernel-name $2 -c 1 --set full \
    --section SourceCounters \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$2 /tmp/t/N bench $1 --graph er-1M-d16 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu/ncu-$2.log 2>&1
  ncu -i /tmp/o/$2.ncu-rep --print-details all > /tmp/o/ncu/ncu-$2.txt 2>&1
  ncu -i /tmp/o/$2.ncu-rep --page source --csv --print-source sass | gzip > /tmp/o/ncu/sass-$2.csv.gz
  tar -C /tmp/o -cJf $OUT/ncu.tar.xz ncu
  echo "ncu of $2 done at $(($(date +%s) - start)) s"
done
tar -C /tmp/o -cJf $OUT/ncu.tar.xz ncu
