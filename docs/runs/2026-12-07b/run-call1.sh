#!/usr/bin/env bash
# Call 1 (thirty-first session): every GPU test and the main job on N (`977c9fd`: the dense
# tiles' aggregation over 2 rows x 4 features, the closed blocks' row sums by quads, GAT's
# per-edge tiles launched with the shared memory they use), then M (`fef8d9c`, before them) and
# N side by side on the batch cases, two rounds in opposite orders (one with `short`); beside them, on the GPU machine's CPUs, turbo-gnn's wheel from its PyPI sdist in
# `.whl/` (`pip download --no-deps --no-binary turbo-gnn turbo-gnn==0.1.0rc4`), brought back in
# $OUT for the report's peers (call 2). The archive `.gpu/callm.tar.xz`: in a checkout of each
# commit `cargo build --release -p dfgnn-cli`, `target/release/dfgnn` copied to `.gpu/build/M`
# or `N`; on N's, `scripts/gpu-tests.sh build .gpu/build/gpu-tests` and `maturin build --release
# --zig --compatibility manylinux_2_28 --manifest-path python/Cargo.toml` (the wheel copied to
# `.gpu/build`); then in `.gpu/build`, `tar -cf - gpu-tests M N dfgnn-*.whl | xz -6 -T2 >
# ../callm.tar.xz`.
# Carry: .gpu/callm.tar.xz, .gpu/planetoid, .whl (no graph-tool files: no GPU test reads them).
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
[[ ${1:-} == short ]] || (
  mkdir -p /tmp/whl
  TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE MAX_JOBS=6 nice -n 19 python3 -m pip wheel \
    --no-build-isolation --no-index --no-deps -w /tmp/whl .whl/turbo_gnn-0.1.0rc4.tar.gz > /tmp/turbo-build.txt 2>&1
  echo "turbo-gnn wheel rc=$? at $(($(date +%s) - start)) s" >> /tmp/turbo-build.txt
) &
scripts/gpu-call.sh .gpu/callm.tar.xz N
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== N tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-512x200-d60 1 128
gt batch-1024x120-d50 4 64
gt batch-1024x120-d50 1 128 --tiles dense --block-backward false
CASES
scripts/ab.sh -b $(( 200 - ($(date +%s) - start) )) 'M=/tmp/t/M' 'N=/tmp/t/N' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if [[ ${1:-} != short ]]; then
  scripts/ab.sh -b $(( 280 - ($(date +%s) - start) )) 'N=/tmp/t/N' 'M=/tmp/t/M' < /tmp/o/cases > $OUT/ab2.txt
  echo "== round 2 done at $(($(date +%s) - start)) s"
fi
wait
cp /tmp/turbo-build.txt $OUT/
cp /tmp/whl/turbo_gnn-*.whl $OUT/ 2>/dev/null || true
echo "done at $(($(date +%s) - start)) s"
