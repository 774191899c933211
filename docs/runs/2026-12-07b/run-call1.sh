#!/usr/bin/env bash
# Call 1 (thirty-first session): every GPU test and the main job on `main` (binary `M`, the test
# binaries and the dfgnn wheel in `.gpu/callm.tar.xz`: `cargo build --release -p dfgnn-cli`,
# `scripts/gpu-tests.sh build .gpu/build/gpu-tests`, `maturin build --release --zig
# --compatibility manylinux_2_28 --manifest-path python/Cargo.toml`; then in `.gpu/build`,
# `tar -cf - gpu-tests M dfgnn-*.whl | xz -6 -T2 > ../callm.tar.xz`), and beside them, on the
# GPU machine's CPUs, turbo-gnn's wheel from its PyPI sdist in `.whl/` (`pip download --no-deps
# --no-binary turbo-gnn turbo-gnn==0.1.0rc4`), brought back in $OUT for the report's peers.
# Carry: .gpu/callm.tar.xz, .gpu/planetoid, .whl (no graph-tool files: no GPU test reads them).
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
(
  mkdir -p /tmp/whl
  TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE MAX_JOBS=12 python3 -m pip wheel --no-build-isolation \
    --no-index --no-deps -w /tmp/whl .whl/turbo_gnn-0.1.0rc4.tar.gz > /tmp/turbo-build.txt 2>&1
  echo "turbo-gnn wheel rc=$? at $(($(date +%s) - start)) s" >> /tmp/turbo-build.txt
) &
scripts/gpu-call.sh .gpu/callm.tar.xz M
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
wait
cp /tmp/turbo-build.txt $OUT/
cp /tmp/whl/turbo_gnn-*.whl $OUT/ 2>/dev/null || true
echo "done at $(($(date +%s) - start)) s"
