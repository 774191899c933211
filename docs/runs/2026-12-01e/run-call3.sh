#!/usr/bin/env bash
# GAT forward: lane-per-edge scores for units of >= 32 edges only (C) against main0 (29e8537).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call3.tar.xz -C /tmp/ab
t=$OUT/tests.txt
timeout 120 /tmp/ab/gat --ignored >> $t 2>&1; echo "gat rc=$?" >> $t
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in main0 C; do
    [[ $(( $(date +%s) - start )) -gt 300 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 "$@" 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b $* | $r" >> $log
  done
}
for rep in 1 2; do
run gat batch-1024x120-d50 1 128
run gat er-1M-d16 4 64
run gat er-1M-d16 1 128
run gat pl-1M-d16 4 64
run gat gt-email-Enron 4 64
run gat mol-16384 1 128
run gat er-256K-d64 4 64
done
echo "ab done $(( $(date +%s) - start )) s" >> $log
