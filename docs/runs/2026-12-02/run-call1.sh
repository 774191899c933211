#!/usr/bin/env bash
# Call 1: GPU tests of the narrowed heads (and the sixth session's kernels), the Python CUDA tests,
# the main job, then A/B: ab (ab3a88f, before the butterfly and launch merges) against N (narrow
# branch, default plan) and N with --head-lanes G.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call1.tar.xz -C /tmp/ab
t=$OUT/tests.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $t
date -u >> $t
timeout 150 scripts/gpu-tests.sh run /tmp/ab/gpu-tests >> $t 2>&1; echo "gpu-tests rc=$? $(( $(date +%s) - start )) s" >> $t
timeout 60 /tmp/ab/dfgnn-N run --backend cuda --data-dir .gpu/data > $OUT/main-job.txt 2>&1; echo "main job rc=$?" >> $OUT/main-job.txt
rm -rf /tmp/site; mkdir -p target; cp -r /tmp/ab/python-wheels target/
pip install -q --no-index --no-deps --target /tmp/site target/python-wheels/dfgnn-*.whl target/python-wheels/deps/*.whl > $OUT/pytest.txt 2>&1
DFGNN_REQUIRE_CUDA=1 PYTHONPATH=/tmp/site timeout 120 python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_cuda.py >> $OUT/pytest.txt 2>&1; echo "pytest rc=$? $(( $(date +%s) - start )) s" >> $t
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 560 ]] && return
    local bin=${b%%:*} extra=""
    [[ $b == *:* ]] && extra="--head-lanes ${b#*:}"
    r=$(/tmp/ab/dfgnn-$bin bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 $extra 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
run gt batch-1024x120-d50 1 128 ab N N:8 N:4 N:16
run gat batch-1024x120-d50 1 128 ab N N:8 N:4 N:16
run agnn batch-1024x120-d50 1 128 ab N N:8 N:4
run gt gt-email-Enron 4 64 ab N N:8 N:4
run gat gt-email-Enron 4 64 ab N N:8 N:4
run gt cora 4 32 ab N N:8 N:4
run gt er-1M-d16 4 64 ab N N:8 N:4
run gat er-1M-d16 4 64 ab N N:8 N:4
run gt er-1M-d16 1 128 ab N N:8 N:4
run gat er-1M-d16 1 128 ab N N:8 N:4
run gatv2 er-1M-d16 4 64 ab N N:8
run gt mol-16384 1 128 ab N N:8
run gat mol-16384 1 128 ab N N:8
run gt pl-1M-d16 4 64 ab N N:8
run gt gt-as-22july06 4 64 ab N N:8 N:4
echo "round 1 done $(( $(date +%s) - start )) s" >> $log
run gt batch-1024x120-d50 1 128 N:8 N ab N:4
run gat batch-1024x120-d50 1 128 N:8 N ab N:4
run gt gt-email-Enron 4 64 N:8 N ab N:4
run gt er-1M-d16 4 64 N:8 N ab
echo "done $(( $(date +%s) - start )) s" >> $log
