#!/usr/bin/env bash
# A/B of the rows-per-warp default: step2-cap56 (old planner) against rows (same kernels, new planner).
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
mkdir -p /tmp/ab && tar -xJf .gpu/ab2.tar.xz -C /tmp/ab
log=$OUT/ab2.txt
run() { local m=$1 g=$2 h=$3 f=$4
  for b in step2-cap56 rows step2-cap56 rows; do
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 20 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
for g in mol-16384 gt-power citeseer cora gt-email-Enron gt-as-22july06 gt-hep-th; do
  run gt $g 4 64; run gt $g 1 128; run gat $g 4 64; run gatv2 $g 1 128
done
