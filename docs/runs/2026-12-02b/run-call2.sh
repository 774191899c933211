#!/usr/bin/env bash
# Call 2: GPU tests of C (main's kernels with the two backward caps) and of W2 (C plus windowed
# neighbour ids, the shuffle outside any branch); an A/B of C against W2; a sweep of forced
# split options on the tiny graphs with C.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call2.tar.xz -C /tmp/ab
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
for t in C W2; do
  f=$OUT/gpu-tests-$t.txt
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $f
  scripts/gpu-tests.sh run /tmp/ab/tests-$t >> $f 2>&1; echo "gpu-tests rc=$? $(( $(date +%s) - start )) s" >> $f
  tail -2 $f
done
log=$OUT/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 500 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 20 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
for round in 1 2; do
  run gt gt-hep-th 4 32 C W2
  run gt gt-hep-th 1 128 C W2
  run gt gt-power 4 64 C W2
  run gat gt-hep-th 4 64 C W2
  run gt gt-email-Enron 4 64 C W2
  run gt batch-1024x120-d50 1 128 C W2
  run gat batch-1024x120-d50 1 128 C W2
  run gt er-1M-d16 4 64 C W2
  run gat er-1M-d16 4 64 C W2
  run gt mol-16384 1 128 C W2
  echo "round $round done $(( $(date +%s) - start )) s" >> $log
done
sw=$OUT/sweep-tiny.txt
for g in gt-hep-th gt-power; do
  for opt in "" "--split-threshold 16 --chunk-edges 8" "--split-threshold 16 --chunk-edges 16" "--split-threshold 64 --chunk-edges 16" "--block-threads 64" "--block-threads 32" "--units-per-block 1 --block-threads 32"; do
    [[ $(( $(date +%s) - start )) -gt 530 ]] && break
    r=$(/tmp/ab/dfgnn-C bench gt --graph $g --heads 4 --feat 32 --schedule row_split $opt --repeats 20 2>&1 | grep -E '^row_split|error')
    echo "gt $g 4x32 [$opt] | $r" >> $sw
  done
  r=$(/tmp/ab/dfgnn-C bench gt --graph $g --heads 4 --feat 32 --schedule edge_parallel --repeats 20 2>&1 | grep -E '^edge_parallel|error')
  echo "gt $g 4x32 [edge_parallel] | $r" >> $sw
done
echo "done $(( $(date +%s) - start )) s" >> $log
