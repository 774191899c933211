#!/usr/bin/env bash
# Call 2 (thirty-third session): every GPU test and the main job on Y (X plus the dense tiles'
# softmax run group by group: one test per group of 16 sources instead of predicates kept per
# pair), then T (`d8c15a2`), W (`d1ee533`: U with the closed blocks' staging loop kept rolled),
# X (`cd7c932`: W plus the dense tiles' aggregation over 4 rows × 4 features a thread, the
# sources in two halves) and Y side by side on the cases that stage tiles, two rounds in opposite
# orders. The archive `.gpu/cally2.tar.xz`: at each commit (Y the tree of the commit after X)
# `cargo build --release -p dfgnn-cli`, `target/release/dfgnn` copied to `.gpu/build/<name>/`; at
# Y `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; in `.gpu/build`,
# `tar -cf - gpu-tests T W X Y | xz -6 -T2 > ../cally2.tar.xz`.
# Carry: .gpu/cally2.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/cally2.tar.xz Y/dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== Y tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-512x200-d60 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gat batch-1024x120-d50 1 128
gatv2 batch-1024x120-d50 1 128
CASES
v() { for n in "$@"; do echo "$n=/tmp/t/$n/dfgnn"; done; }
mapfile -t order1 < <(v T W X Y)
mapfile -t order2 < <(v Y X W T)
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) "${order1[@]}" < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) "${order2[@]}" < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
