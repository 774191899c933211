#!/usr/bin/env bash
# Call 3 (thirty-fifth session): every GPU test and the main job on M (branch `made`: AGNN's keys
# and queries made from the features and inverse norms while the tiles and closed blocks stage
# them, so its normalisation writes neither `hn` nor `q`; the same bits on the emulator), then
# N (HEAD `eea2178`'s device code) against M, two rounds in opposite orders: AGNN and GT (whose
# tile kernels gained the branch) on the batch graph. `.gpu/callm2.tar.xz`: at M `cargo build
# --release -p dfgnn-cli` copied to `.gpu/build/M/`, `scripts/gpu-tests.sh build
# .gpu/build/gpu-tests`, both stripped, `tar -cf - gpu-tests M | xz -9 -T2` in `.gpu/build`.
# Carry: .gpu/callm2.tar.xz, .gpu/callr.tar.xz, .gpu/planetoid.
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
scripts/ab.sh -b $(( 200 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'M=/tmp/t/M/dfgnn' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 290 - ($(date +%s) - start) )) 'M=/tmp/t/M/dfgnn' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab2.txt
echo "== round 2 done at $(($(date +%s) - start)) s"
