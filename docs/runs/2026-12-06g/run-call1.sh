#!/usr/bin/env bash
# Call 1 (twenty-eighth session): every GPU test and the main job on D, then F, G and D side by
# side; then on an H200 the issues' target cases on D, else a second round in the opposite order.
# F: `83dc96f` (the kernels of `a8f5c41`). G: `dc214bb` (F with GAT's per-edge tile forward
# launched with the shared memory it uses). D (`cf24a45`, branch `s28`): G with the closed-block
# backward's row sums reading a quad of the matrix a load, the dense tile forward's aggregation
# over 2 rows × 4 features a thread (bit-identical outputs), and GAT's forward over dense tiles
# (which `auto` takes on the batch; `--tiles edges` gives G's per-edge kernel).
# The archive `.gpu/call1.tar.xz` (carried with `.gpu/gt3` and `.gpu/planetoid`): in a checkout of
# each commit, `cargo build --release -p dfgnn-cli` and copy `target/release/dfgnn` to
# `.gpu/build/F`, `G` or `D`; on D's, also `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; then
# in `.gpu/build`, `tar -cf - gpu-tests F G D | xz -9e -T2 > ../call1.tar.xz` (about 11 MB).
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call1.tar.xz D
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== D tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128 --tiles edges
gt batch-1024x120-d50 4 64
gat batch-1024x120-d50 4 64
gat batch-1024x120-d50 4 64 --tiles edges
gat mol-16384 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gat batch-1024x120-d20 1 128 --tiles dense
CASES
scripts/ab.sh -b $(( 120 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'G=/tmp/t/G' 'D=/tmp/t/D' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b $(( 180 - ($(date +%s) - start) )) 'D=/tmp/t/D' < scripts/target-cases.txt > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
else
scripts/ab.sh -b $(( 170 - ($(date +%s) - start) )) 'D=/tmp/t/D' 'G=/tmp/t/G' 'F=/tmp/t/F' < /tmp/o/cases > $OUT/ab2.txt
fi
echo "done at $(($(date +%s) - start)) s"
