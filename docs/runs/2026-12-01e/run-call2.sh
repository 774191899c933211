#!/usr/bin/env bash
# Scalar-scored GAT forward and column pass: GPU tests, ncu, then A/B against main0 (29e8537).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s)
mkdir -p /tmp/ab && tar -xJf .gpu/call2.tar.xz -C /tmp/ab
t=$OUT/tests.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $t
timeout 120 /tmp/ab/gat --ignored >> $t 2>&1; echo "gat rc=$?" >> $t
timeout 200 /tmp/ab/gpu --ignored gat >> $t 2>&1; echo "gpu gat rc=$?" >> $t
echo "gat tests done $(( $(date +%s) - start )) s" >> $t
export DFGNN_BACKEND=cuda DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
m=gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed
timeout 60 ncu --metrics $m --csv /tmp/ab/dfgnn-A bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --repeats 1 --warmup 0 > $OUT/ncu-gat-batch.csv 2>&1
log=$OUT/ab.txt
run() { local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in "$@"; do
    [[ $(( $(date +%s) - start )) -gt 480 ]] && return
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 10 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" >> $log
  done
}
run gat batch-1024x120-d50 1 128 main0 A B
run gat er-1M-d16 4 64 main0 A B
run gat er-1M-d16 1 128 main0 A B
run gat gt-email-Enron 4 64 main0 A B
run gat pl-1M-d16 4 64 main0 A B
run gt batch-1024x120-d50 1 128 main0 A
run gat mol-16384 1 128 main0 A B
run gt er-1M-d16 4 64 main0 A
run agnn batch-1024x120-d50 1 128 main0 A
echo "ab done $(( $(date +%s) - start )) s" >> $log
timeout 100 /tmp/ab/attention --ignored >> $t 2>&1; echo "attention rc=$?" >> $t
echo "done $(( $(date +%s) - start )) s" >> $t
