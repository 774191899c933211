#!/usr/bin/env bash
# Call 2 (thirty-second session): every GPU test and the main job on Q (`99d08a7`: the per-edge
# tiles' score beside its pack, one 8-byte load for both, the packs turned into value indices
# for the aggregation), then P (`108f0ee`, before it) and Q side by side on the cases that take
# per-edge tiles (GAT and GATv2 on the batches, GT and AGNN on the sparser batches, GAT's column
# tiles in every forward+backward of GAT here), two rounds in opposite orders (one with `short`).
# The archive `.gpu/callq.tar.xz`: in a checkout of each commit `cargo build --release -p
# dfgnn-cli`, `target/release/dfgnn` copied to `.gpu/build/P` or `Q`; on Q's,
# `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; then in `.gpu/build`, `tar -cf - gpu-tests P
# Q | xz -6 -T2 > ../callq.tar.xz`.
# Carry: .gpu/callq.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/callq.tar.xz Q
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== Q tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gat batch-1024x120-d50 1 128
gat batch-512x200-d60 1 128
gat batch-1024x120-d50 4 64
gatv2 batch-1024x120-d50 1 128
gt batch-1024x120-d20 1 128
agnn batch-1024x120-d20 1 128
gt batch-4096x30-d10 4 64
gat mol-16384 1 128 --tiles edges
CASES
scripts/ab.sh -b $(( 230 - ($(date +%s) - start) )) 'P=/tmp/t/P' 'Q=/tmp/t/Q' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if [[ ${1:-} != short ]]; then
  scripts/ab.sh -b $(( 330 - ($(date +%s) - start) )) 'Q=/tmp/t/Q' 'P=/tmp/t/P' < /tmp/o/cases > $OUT/ab2.txt
  echo "== round 2 done at $(($(date +%s) - start)) s"
fi
echo "done at $(($(date +%s) - start)) s"
