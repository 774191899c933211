#!/usr/bin/env bash
# Call 2: turbo-gnn's wheel built from its sdist (in the background, on the CPU cores), and an A/B
# of backward register caps: A (main, c988f0e: GT's passes at 80, GAT's columns at 64, the rest
# uncapped) against C64 and C56 (the six 16-byte one-slot backward passes of GT, GAT and GATv2
# capped at 64 / 56; no spills).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call2.tar.xz -C /tmp/ab
( cd /tmp && TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE MAX_JOBS=12 python3 -m pip wheel --no-build-isolation --no-deps \
    -w /tmp/whl $OLDPWD/.gpu/turbo_gnn-0.1.0rc4.tar.gz > /tmp/turbo.log 2>&1; echo "turbo rc=$? $(( $(date +%s) - start )) s" >> /tmp/turbo.log ) &
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 500 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
for round in 1 2; do
  run gt er-1M-d16 4 64 A C64 C56
  run gat er-1M-d16 4 64 A C64 C56
  run gatv2 er-1M-d16 4 64 A C64 C56
  run gt batch-1024x120-d50 1 128 A C64 C56
  run gat batch-1024x120-d50 1 128 A C64 C56
  run gt er-1M-d16 1 128 A C64 C56
  run gat er-1M-d16 1 128 A C64 C56
  run gt gt-email-Enron 4 64 A C64 C56
  run gt pl-1M-d16 4 64 A C64 C56
  run agnn er-1M-d16 4 64 A C64 C56
  run gat pl-1M-d16 4 64 A C64 C56
  run gt mol-16384 1 128 A C64 C56
  echo "round $round done $(( $(date +%s) - start )) s" >> $log
done
wait
cp /tmp/turbo.log $OUT/; cp /tmp/whl/turbo_gnn-*.whl $OUT/ 2>/dev/null
echo "done $(( $(date +%s) - start )) s" >> $log
