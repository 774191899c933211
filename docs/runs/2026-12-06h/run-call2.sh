#!/usr/bin/env bash
# Call 2 (twenty-ninth session), `run-call2.sh [short]`: the TF32 probe (`tf32-probe.cu`), every
# GPU test and the main job on T (`a671419`, branch `tc`: branch `s28`'s kernels plus GT's dense
# tile forward on the tensor cores, `tiles::tensor`, taken with `--tensor-cores true`), then F, D
# and T on the tensor cores side by side on the batch cases: two rounds in opposite orders, or one
# with `short` (for little device time: about 150 s after the machine starts). F: `83dc96f`
# (main's kernels). D: `cf24a45` (branch `s28` before its rebase onto `479c760`; the rebased
# `aeda85e` has the same kernels). T without the flag runs D's kernels, so it is not timed apart.
# The archive `.gpu/call2.tar.xz` (carried with `.gpu/gt3` and `.gpu/planetoid`): in a checkout of
# each commit, `cargo build --release -p dfgnn-cli` and copy `target/release/dfgnn` to
# `.gpu/build/F`, `D` or `T`; on T's, also `scripts/gpu-tests.sh build .gpu/build/gpu-tests`; then
# in `.gpu/build`, `tar -cf - gpu-tests F D T | xz -9e -T2 > ../call2.tar.xz`.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
nvcc -O3 -arch=sm_90 -o /tmp/probe docs/runs/2026-12-06h/tf32-probe.cu > $OUT/probe.txt 2>&1 &&
  /tmp/probe >> $OUT/probe.txt 2>&1
echo "== probe rc=$? at $(($(date +%s) - start)) s"
scripts/gpu-call.sh .gpu/call2.tar.xz T
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== T tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128 --tiles edges
gt batch-1024x120-d50 4 64
CASES
variants=('F=/tmp/t/F' 'D=/tmp/t/D' 'TC=/tmp/t/T --tensor-cores true')
scripts/ab.sh -b $(( 140 - ($(date +%s) - start) )) "${variants[@]}" < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if [[ ${1:-} != short ]]; then
  scripts/ab.sh -b $(( 210 - ($(date +%s) - start) )) "${variants[2]}" "${variants[1]}" "${variants[0]}" < /tmp/o/cases > $OUT/ab2.txt
fi
echo "done at $(($(date +%s) - start)) s"
