#!/usr/bin/env bash
# Call 1 (thirty-sixth session): every GPU test and the main job on F (branch `made`: M, AGNN's
# keys and queries made while staging, plus AGNN's normalisation backward folded into the closed
# blocks, so `agnn_normalize_backward` no longer runs after them), then N (`main`'s device code),
# M and F side by side, two rounds in opposite orders: AGNN and GT on the batch graph, AGNN on
# mol-16384. Then GATv2's forward at one slot in steps of 4 edges (branch `step4`, off `main`:
# V80 at `3caf919`, capped at 80 registers, 20 bytes spilled; V0 at `656bd22`, uncapped, 87
# registers) against N's steps of 2 at 64, on er-1M-d16 and mol-16384 1×128, where turbo-gnn's
# forward was faster. `.gpu/callf.tar.xz`: at F `cargo build --release -p dfgnn-cli` copied to
# `.gpu/build/F`, M's binary (`d5ca51a`) as `.gpu/build/M`, V80's and V0's likewise,
# `scripts/gpu-tests.sh build .gpu/build/gpu-tests` at F, all stripped,
# `tar -cf - gpu-tests F M V80 V0 | xz -9 -T2` in `.gpu/build/stage`.
# Carry: .gpu/callf.tar.xz, .gpu/callr.tar.xz (N), .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
scripts/gpu-call.sh .gpu/callf.tar.xz F
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== F tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 4 64
gt batch-1024x120-d50 4 64
agnn mol-16384 1 128
CASES
scripts/ab.sh -b $(( 190 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'M=/tmp/t/M' 'F=/tmp/t/F' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 290 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'M=/tmp/t/M' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases-v <<'CASES'
gatv2 er-1M-d16 1 128
gatv2 mol-16384 1 128
CASES
scripts/ab.sh -b $(( 370 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'V80=/tmp/t/V80' 'V0=/tmp/t/V0' < /tmp/o/cases-v > $OUT/ab-step1.txt
scripts/ab.sh -b $(( 450 - ($(date +%s) - start) )) 'V0=/tmp/t/V0' 'V80=/tmp/t/V80' 'N=/tmp/t/N' < /tmp/o/cases-v > $OUT/ab-step2.txt
echo "== GATv2 steps done at $(($(date +%s) - start)) s"
# Then, while time is left, ncu of GATv2's forward (`gatv2_fwd_w4_s1`) on er-1M-d16 1×128, where
# turbo-gnn's forward was faster, and of GT's (`gt_fwd_w4_s1`) on the same graph, on N.
mkdir -p /tmp/o/ncu
for mk in "gatv2 gatv2_fwd_w4_s1" "gt gt_fwd_w4_s1"; do
  set -- $mk
  left=$(( 570 - ($(date +%s) - start) ))
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
