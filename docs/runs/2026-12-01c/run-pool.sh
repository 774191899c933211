#!/usr/bin/env bash
# A/B: the device pool keeping freed memory (dfgnn-pool) against giving it back (dfgnn-before).
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool
mkdir -p /tmp/p && tar -xJf .gpu/pool.tar.xz -C /tmp/p
for c in "gt mol-16384 4 64" "agnn mol-16384 4 64" "gt er-1M-d16 4 64" "gat er-1M-d16 4 64" "gt batch-1024x120-d50 1 128" "gt gt-email-Enron 4 64" "agnn gt-email-Enron 4 64"; do set -- $c
  for b in before pool before pool; do
    echo "$c $b $(/tmp/p/dfgnn-$b bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')" >> $OUT/ab-pool.txt
  done
done
cut -c1-100 $OUT/ab-pool.txt
