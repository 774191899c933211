#!/usr/bin/env bash
# Call 6 (at a4b3c32): where GAT's fused backward loses to the unfused one on mol-16384, and its
# batch forward to the unfused forward: per-kernel time, registers, occupancy and instructions (ncu).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call1.tar.xz -C /tmp/t
B=/tmp/t/dfgnn
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct,launch__grid_size,launch__block_size
for shape in "1 128" "4 64"; do set -- $shape
  timeout 120 ncu --metrics $m --csv $B bench gat --graph mol-16384 --heads $1 --feat $2 --schedule auto,unfused \
    --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-gat-mol-$1x$2.csv 2>&1
done
timeout 120 ncu --metrics $m --csv $B bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto,unfused \
  --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-gat-batch-1x128.csv 2>&1
tar -cJf $OUT/call6-out.tar.xz -C /tmp/o .
