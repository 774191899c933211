#!/usr/bin/env bash
# GPU tests of GAT's positive part, then A/B: before (18582ce-era binary), part, part + forward
# cap 72, part + cap 72 + column-pass cap 64.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/part.tar.xz -C /tmp/ab
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/tests.txt
/tmp/ab/gat --ignored >> $OUT/tests.txt 2>&1; echo "gat rc=$?" >> $OUT/tests.txt
/tmp/ab/gpu --ignored gat >> $OUT/tests.txt 2>&1; echo "gpu gat rc=$?" >> $OUT/tests.txt
echo "tests done $(( $(date +%s) - start )) s" >> $OUT/tests.txt
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
run() { local m=$1 g=$2 h=$3 f=$4
  for b in 18582ce part part-cap72 part-cap72-cols64; do
    [[ $(( $(date +%s) - start )) -gt 560 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
for rep in 1 2; do
  run gat er-1M-d16 4 64
  run gat er-1M-d16 1 128
  run gat pl-1M-d16 4 64
  run gat batch-1024x120-d50 1 128
  run gat gt-email-Enron 4 64
  run gat mol-16384 1 128
done
echo "done $(( $(date +%s) - start )) s" >> $log
