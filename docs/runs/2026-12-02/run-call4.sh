#!/usr/bin/env bash
# Call 4: register caps of the backward passes, one pass at a time: V0 (cc30a5e: GT's passes at 80,
# GATv2's at 64) against G1-G4 (GATv2's row / column pass at 56/64, 64/56, 72/64, 64/72) and T1-T4
# (GT's row pass at 72, its column pass at 72, the row pass at 64, the column pass at 64).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call4.tar.xz -C /tmp/ab
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
log=$OUT/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 280 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
run gatv2 er-1M-d16 4 64 V0 G1 G2 G3 G4
run gt er-1M-d16 4 64 V0 T1 T2 T3 T4
run gt mol-16384 1 128 V0 T1 T2 T3 T4
run gt batch-1024x120-d50 1 128 V0 T1 T2 T3 T4
run gatv2 pl-1M-d16 4 64 V0 G1 G2 G3 G4
run gt er-1M-d16 1 128 V0 T1 T2 T3 T4
echo "round 1 done $(( $(date +%s) - start )) s" >> $log
run gatv2 er-1M-d16 4 64 G4 G3 G2 G1 V0
run gt er-1M-d16 4 64 T4 T3 T2 T1 V0
run gt mol-16384 1 128 T4 T3 T2 T1 V0
run gt batch-1024x120-d50 1 128 T4 T3 T2 T1 V0
echo "done $(( $(date +%s) - start )) s" >> $log
