#!/usr/bin/env bash
# Every GPU test of the merged tree, the Python CUDA tests, the main job, and GAT before/after.
set -uo pipefail
mkdir -p /tmp/t && tar xJf .gpu/tests.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
date -u
timeout 220 scripts/gpu-tests.sh run /tmp/t/gpu-tests > $OUT/gpu-tests.txt 2>&1; echo "gpu-tests rc=$?"; grep -E "^== |test result|FAILED|panicked|gpu-tests:" $OUT/gpu-tests.txt | head -30
date -u
site=/tmp/site; rm -rf $site
python3 -m pip install -q --no-index --no-deps --target $site target/python-wheels/dfgnn-*.whl target/python-wheels/deps/*.whl 2>&1 | tail -n 2
DFGNN_REQUIRE_CUDA=1 PYTHONPATH=$site timeout 200 python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_cuda.py > $OUT/pytest-cuda.txt 2>&1; echo "pytest rc=$?"; tail -n 8 $OUT/pytest-cuda.txt
date -u
timeout 60 /tmp/t/dfgnn run --backend cuda --data-dir .gpu/data > $OUT/main-job.txt 2>&1; echo "main job rc=$?"; tail -n 2 $OUT/main-job.txt
export DFGNN_BACKEND=cuda
for rep in 1 2; do
  for c in "gat er-1M-d16 4 64" "gat er-1M-d16 1 128" "gat batch-1024x120-d50 1 128" "agnn er-1M-d16 4 64"; do set -- $c
    for b in /tmp/t/old/dfgnn-step2-cap56 /tmp/t/dfgnn; do
      echo "$c $(basename $(dirname $b))/$(basename $b) $($b bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')" >> $OUT/ab-node-scores.txt
    done
  done
done
cut -c1-120 $OUT/ab-node-scores.txt
date -u
