#!/usr/bin/env bash
# Call 1: GPU tests of W (caps + neighbour windows), then an A/B of M (main 21b53af), C (the two
# measured backward caps: gt_bwd_rows_w4_s1 72, gatv2_bwd_cols_w4_s1 72) and W (C plus windowed
# neighbour ids in the passes' gather).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call1.tar.xz -C /tmp/ab
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu-tests.txt
scripts/gpu-tests.sh run /tmp/ab/gpu-tests >> $OUT/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? $(( $(date +%s) - start )) s" >> $OUT/gpu-tests.txt
log=$OUT/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 540 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
for round in 1 2; do
  run gt gt-hep-th 4 32 M C W
  run gt gt-power 4 64 M C W
  run gt gt-email-Enron 4 64 M C W
  run gt batch-1024x120-d50 1 128 M C W
  run gat batch-1024x120-d50 1 128 M C W
  run gt er-1M-d16 4 64 M C W
  run gat er-1M-d16 4 64 M C W
  run gatv2 er-1M-d16 4 64 M C W
  run gt er-1M-d16 1 128 M C W
  run gat gt-email-Enron 4 64 M C W
  run gt pl-1M-d16 4 64 M C W
  run gt mol-16384 1 128 M C W
  echo "round $round done $(( $(date +%s) - start )) s" >> $log
done
echo "done $(( $(date +%s) - start )) s" >> $log
