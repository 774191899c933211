#!/usr/bin/env bash
# Call 3 (thirty-second session): every GPU test and the main job on R (`309edb4`: call 2's Q
# plus the per-edge tiles' scores past the first chunk reading the pack and the running score by
# one load), then P (`108f0ee`), Q (`99d08a7`) and R side by side on the cases that take per-edge
# tiles, two rounds in opposite orders (one with `short`). The archive `.gpu/callr3.tar.xz`: in a
# checkout of each commit `cargo build --release -p dfgnn-cli`, `target/release/dfgnn` copied to
# `.gpu/build/P`, `Q` or `R`; on R's, `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; then in
# `.gpu/build`, `tar -cf - gpu-tests P Q R | xz -6 -T2 > ../callr3.tar.xz`.
# Carry: .gpu/callr3.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/callr3.tar.xz R
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== R tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d20 1 128
agnn batch-1024x120-d20 1 128
gt mol-16384 1 128 --tiles edges
gatv2 batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-512x200-d60 1 128
CASES
scripts/ab.sh -b $(( 200 - ($(date +%s) - start) )) 'P=/tmp/t/P' 'Q=/tmp/t/Q' 'R=/tmp/t/R' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if [[ ${1:-} != short ]]; then
  scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'Q=/tmp/t/Q' 'P=/tmp/t/P' < /tmp/o/cases > $OUT/ab2.txt
  echo "== round 2 done at $(($(date +%s) - start)) s"
fi
echo "done at $(($(date +%s) - start)) s"
