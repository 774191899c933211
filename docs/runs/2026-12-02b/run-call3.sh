#!/usr/bin/env bash
# Call 3: GPU tests of P (C's kernels, the planner's least split threshold 16 and a split only
# past the threshold plus a chunk), then an A/B of C against P on the tiny graphs, every model.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call3.tar.xz -C /tmp/ab
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
f=$OUT/gpu-tests-P.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $f
scripts/gpu-tests.sh run /tmp/ab/tests-P >> $f 2>&1; echo "gpu-tests rc=$? $(( $(date +%s) - start )) s" >> $f
tail -2 $f
log=$OUT/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 420 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 30 2>&1 | grep -E '^auto|error')
    echo "$m $(basename $g) ${h}x$f $b | $r" >> $log
  done
}
for round in 1 2; do
  for g in .gpu/data/planetoid/cora.npz .gpu/data/planetoid/citeseer.npz gt-hep-th gt-power; do
    for m in gt agnn gat gatv2; do
      run $m $g 4 64 C P
      run $m $g 1 128 C P
    done
  done
  echo "round $round done $(( $(date +%s) - start )) s" >> $log
done
echo "done $(( $(date +%s) - start )) s" >> $log
