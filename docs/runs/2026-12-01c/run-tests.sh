#!/usr/bin/env bash
# Every GPU test of this tree, the Python CUDA tests, the main job; then an A/B of two slots per
# lane (one pass over the heads) at 4x64 and 8x32, and GAT's per-kernel times.
set -uo pipefail
mkdir -p /tmp/t && tar xJf .gpu/tests.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
date -u
timeout 200 scripts/gpu-tests.sh run /tmp/t/gpu-tests > $OUT/gpu-tests.txt 2>&1; echo "gpu-tests rc=$?"; grep -E "test result|FAILED|panicked|gpu-tests:" $OUT/gpu-tests.txt | head -20
date -u
if [[ -n ${PYTESTS:-} ]]; then
site=/tmp/site; rm -rf $site
python3 -m pip install -q --no-index --no-deps --target $site target/python-wheels/dfgnn-*.whl target/python-wheels/deps/*.whl 2>&1 | tail -n 2
DFGNN_REQUIRE_CUDA=1 PYTHONPATH=$site timeout 200 python3 -m pytest -q -x -p no:cacheprovider python/tests/test_cuda.py > $OUT/pytest-cuda.txt 2>&1; echo "pytest rc=$?"; tail -n 5 $OUT/pytest-cuda.txt
fi
date -u
timeout 60 /tmp/t/dfgnn run --backend cuda --data-dir .gpu/data > $OUT/main-job.txt 2>&1; echo "main job rc=$?"; tail -n 3 $OUT/main-job.txt
export DFGNN_BACKEND=cuda
for rep in 1 2; do
  for c in "gat er-1M-d16 4 64" "gat pl-1M-d16 4 64" "gat er-1M-d16 8 32" "gatv2 er-1M-d16 4 64" "gt er-1M-d16 4 64"; do set -- $c
    for o in "" "--max-slots 2"; do
      echo "$c [$o] $(/tmp/t/dfgnn bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 $o 2>&1 | grep -E '^auto|error')" >> $OUT/ab-slots.txt
    done
  done
done
cut -c1-110 $OUT/ab-slots.txt
timeout 120 ncu --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed /tmp/t/dfgnn bench gat --graph er-1M-d16 --heads 4 --feat 64 --schedule auto --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-gat-er1m.txt 2>&1
grep -E '^  [a-z_0-9]+ \(|duration|warps_active|registers|dram__' $OUT/ncu-gat-er1m.txt | head -80
date -u
