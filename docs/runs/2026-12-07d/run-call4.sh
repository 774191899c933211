#!/usr/bin/env bash
# Call 4 (thirty-third session): every GPU test and the main job on Z (`449c95e`: the closed
# blocks' gradient sums over 4 nodes × 4 features a thread), then Y (`4389ecc`, call 2's Y)
# against Z on the cases whose backward runs over closed blocks, two rounds in opposite orders.
# The archive `.gpu/callz4.tar.xz`: at Z `cargo build --release -p dfgnn-cli`,
# `target/release/dfgnn` copied to `.gpu/build/Z/`, `scripts/gpu-tests.sh build
# .gpu/build/gpu-tests`; in `.gpu/build`, `tar -cf - gpu-tests Y Z | xz -6 -T2 > ../callz4.tar.xz`.
# Carry: .gpu/callz4.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/callz4.tar.xz Z/dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== Z tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d50 2 50
gt batch-1024x120-d20 1 128 --tiles dense --block-backward true
CASES
scripts/ab.sh -b $(( 170 - ($(date +%s) - start) )) 'Y=/tmp/t/Y/dfgnn' 'Z=/tmp/t/Z/dfgnn' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 270 - ($(date +%s) - start) )) 'Z=/tmp/t/Z/dfgnn' 'Y=/tmp/t/Y/dfgnn' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
