#!/usr/bin/env bash
# Fused multiply-adds and 32-bit row index products (F) against main0 (29e8537).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call4.tar.xz -C /tmp/ab
t=$OUT/tests.txt
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in main0 F; do
    [[ $(( $(date +%s) - start )) -gt 330 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 "$@" 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b $* | $r" >> $log
  done
}
for rep in 1 2; do
run gat er-1M-d16 4 64
run gt er-1M-d16 4 64
run gat batch-1024x120-d50 1 128
run gt batch-1024x120-d50 1 128
run gat er-1M-d16 1 128
run gt er-1M-d16 1 128
run agnn batch-1024x120-d50 1 128
run gt gt-email-Enron 4 64
run gat pl-1M-d16 4 64
run gatv2 er-1M-d16 1 128
run agnn er-1M-d16 4 64
done
echo "ab done $(( $(date +%s) - start )) s" >> $log
