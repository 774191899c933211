#!/usr/bin/env bash
# Call 1 (thirty-seventh session): every GPU test and the main job on GA (branch `gatv2a`:
# `rowgroups` at `a9b5c7b`, the dense tile forward in one copy per count of groups of 16 rows, plus
# GATv2's query holding its vectors of `a` up to 2 slots), then N (`main`'s device code, from
# `.gpu/callr.tar.xz`) against GA, two rounds in opposite orders: GT and AGNN on the batch graph
# at 1×128 and 4×64 (dense tiles: the rows change), GATv2 on er-1M-d16, mol-16384
# and the batch at 1×128 (GATv2's row kernels: the held `a`). Then, while time is left, ncu of
# `gt_tiles_fwd_w4` on GA (its spill grew: 132 → 260 bytes). `.gpu/callg.tar.xz`: at `gatv2a`
# `cargo build --release -p dfgnn-cli` as GA, `scripts/gpu-tests.sh build .gpu/build/gpu-tests`,
# both stripped, `tar -cf - gpu-tests GA | xz -9 -T2` in `.gpu/build/stage`.
# Carry: .gpu/callg.tar.xz, .gpu/callr.tar.xz (N), .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
scripts/gpu-call.sh .gpu/callg.tar.xz GA
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== GA tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
agnn batch-1024x120-d50 4 64
gatv2 er-1M-d16 1 128
gatv2 mol-16384 1 128
gatv2 batch-1024x120-d50 1 128
CASES
scripts/ab.sh -b $(( 160 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'GA=/tmp/t/GA' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 250 - ($(date +%s) - start) )) 'GA=/tmp/t/GA' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
mkdir -p /tmp/o/ncu
for b in GA; do
  left=$(( 290 - ($(date +%s) - start) ))
  ((left > 40)) || break
  timeout $left ncu --clock-control none --import-source no --kernel-name gt_tiles_fwd_w4 -c 1 --set full \
    -o /tmp/o/tiles-$b /tmp/t/$b bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu/ncu-tiles-$b.log 2>&1
  ncu -i /tmp/o/tiles-$b.ncu-rep --print-details all > /tmp/o/ncu/ncu-tiles-$b.txt 2>&1
  echo "ncu of $b done at $(($(date +%s) - start)) s"
done
tar -C /tmp/o -cJf $OUT/ncu.tar.xz ncu
