#!/usr/bin/env bash
# Call 4 (fifteenth session): turbo-gnn's wheel from its PyPI sdist (`.whl/turbo_gnn-0.1.0rc4.tar.gz`),
# for the report's peers in call 5; the wheel comes back in $OUT.
start=$(date +%s)
mkdir -p /tmp/turbo
tar -xzf .whl/turbo_gnn-0.1.0rc4.tar.gz -C /tmp/turbo
sha256sum .whl/turbo_gnn-0.1.0rc4.tar.gz
(cd /tmp/turbo/turbo_gnn-0.1.0rc4 && MAX_JOBS=16 TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE \
  python3 -m pip wheel --no-build-isolation --no-deps --no-index -w $OUT . > $OUT/turbo-build-call4.txt 2>&1)
echo "turbo-gnn wheel rc=$? at $(($(date +%s) - start)) s" | tee -a $OUT/turbo-build-call4.txt
ls -la $OUT; sha256sum $OUT/*.whl
