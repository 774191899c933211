#!/usr/bin/env bash
# Call 4 (at 52f0527): turbo-gnn's wheel from its sdist (background, for the report's peers), the
# Python CUDA tests, the main job on CUDA (Cora).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/t && tar -xJf .gpu/call4.tar.xz -C /tmp/t
( cd /tmp && TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE MAX_JOBS=14 python3 -m pip wheel --no-build-isolation --no-deps \
    -w /tmp/whl /tmp/t/turbo_gnn-0.1.0rc4.tar.gz > /tmp/turbo.log 2>&1; echo "turbo rc=$? $(( $(date +%s) - start )) s" >> /tmp/turbo.log ) &
mkdir -p target/python-wheels && cp -r /tmp/t/python-wheels/* target/python-wheels/
date -u > $OUT/pytest-cuda.txt
DFGNN_PY_OFFLINE=1 DFGNN_REQUIRE_CUDA=1 scripts/python-tests.sh -q -rs python/tests/test_cuda.py >> $OUT/pytest-cuda.txt 2>&1; echo "pytest rc=$? $(( $(date +%s) - start )) s" >> $OUT/pytest-cuda.txt
date -u > $OUT/main-job.txt
DFGNN_DATA_DIR=.gpu/data /tmp/t/dfgnn --backend cuda run >> $OUT/main-job.txt 2>&1; echo "main job rc=$? $(( $(date +%s) - start )) s" >> $OUT/main-job.txt
wait
cp /tmp/turbo.log $OUT/; cp /tmp/whl/turbo_gnn-*.whl $OUT/ 2>/dev/null
echo "done $(( $(date +%s) - start )) s" >> $OUT/turbo.log
