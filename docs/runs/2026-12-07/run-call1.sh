#!/usr/bin/env bash
# Call 1 (thirtieth session): the twenty-ninth session's call 2, one round
# (`docs/runs/2026-12-06h/run-call2.sh short`: the TF32 probe, every GPU test and the main job on
# branch `tc`, F/D/TC on the batch cases), and, on 8 of the CPUs beside it, turbo-gnn's wheel for
# the report's peers (call 2), built from its PyPI sdist carried in `.whl/` (`pip download
# --no-deps --no-binary turbo-gnn turbo-gnn==0.1.0rc4`), brought back in $OUT.
# Carry: .gpu/call2.tar.xz, .gpu/gt3, .gpu/planetoid, .whl.
(
  mkdir -p /tmp/whl
  TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE MAX_JOBS=8 python3 -m pip wheel --no-build-isolation \
    --no-index --no-deps -w /tmp/whl .whl/turbo_gnn-0.1.0rc4.tar.gz > /tmp/turbo-build.txt 2>&1
  echo "turbo-gnn wheel rc=$?" >> /tmp/turbo-build.txt
) &
bash docs/runs/2026-12-06h/run-call2.sh short
wait
cp /tmp/turbo-build.txt $OUT/
cp /tmp/whl/turbo_gnn-*.whl $OUT/ 2>/dev/null || true
