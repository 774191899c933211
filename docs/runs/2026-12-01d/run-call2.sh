#!/usr/bin/env bash
# After merging nodebwd: GPU tests (GAT, property tests, Python CUDA), then A/B: part-cap72-cols64
# (d8772f3) against merged (node backward fused, 8e139cb), and GAT forward caps 64 / 56.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call2.tar.xz -C /tmp/ab
t=$OUT/tests.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $t
/tmp/ab/gat --ignored >> $t 2>&1; echo "gat rc=$?" >> $t
/tmp/ab/gpu --ignored gat >> $t 2>&1; echo "gpu gat rc=$?" >> $t
pip install -q --no-index --no-deps --target /tmp/site target/python-wheels/dfgnn-*.whl target/python-wheels/deps/*.whl >> $t 2>&1
DFGNN_REQUIRE_CUDA=1 PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_cuda.py > $OUT/pytest-cuda.txt 2>&1; echo "pytest rc=$?" >> $t
echo "tests done $(( $(date +%s) - start )) s" >> $t
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 540 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
for rep in 1 2; do
  run gat er-1M-d16 4 64 part-cap72-cols64 merged gatfwd64 gatfwd56
  run gat er-1M-d16 1 128 part-cap72-cols64 merged gatfwd64 gatfwd56
  run gat pl-1M-d16 4 64 part-cap72-cols64 merged gatfwd64 gatfwd56
  run gat batch-1024x120-d50 1 128 part-cap72-cols64 merged gatfwd64 gatfwd56
  run gatv2 er-1M-d16 1 128 part-cap72-cols64 merged
  run gat gt-email-Enron 4 64 part-cap72-cols64 merged gatfwd64 gatfwd56
done
echo "done $(( $(date +%s) - start )) s" >> $log
