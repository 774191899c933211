#!/usr/bin/env bash
# Call 7: the GPU tests at the node-scores change, then an A/B of GAT: A = a4b3c32, B = A with
# GAT's node-score kernel computing each pair's rows once (not a 64-bit remainder per load).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call7.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
export DFGNN_BACKEND=cuda
run() { # binary model graph heads feat
  [ "$(left 300)" -gt 0 ] || { echo "out of time before $*" >> /tmp/o/ab.txt; return; }
  r=$(timeout 60 /tmp/t/$1 bench $2 --graph $3 --heads $4 --feat $5 --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
  echo "$1 $2 $3 $4x$5 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "mol-16384 1 128" "mol-16384 4 64" "batch-1024x120-d50 1 128" "er-1M-d16 4 64" "er-1M-d16 1 128" "pl-1M-d16 4 64" "gt-email-Enron 4 64" "cora 4 64"; do
    for bin in A B; do run $bin gat $c; done
  done
  echo "round $round done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
done
tar -cJf $OUT/call7-out.tar.xz -C /tmp/o .
