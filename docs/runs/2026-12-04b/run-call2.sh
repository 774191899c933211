#!/usr/bin/env bash
# Call 2 (sixteenth session): the lane map's divisions replaced by shifts and masks (N) against
# HEAD `0e4e681` (F), and N with every capped w4 s1 kernel's cap 8 registers higher (C), since
# hoisting the map's arithmetic out of the task loop moved registers. ncu's instruction counts of
# N's GATv2 passes on mol-16384 1x128 (F's: call 1).
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
tar -xJf .gpu/call2.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
for b in N C; do
  timeout 60 ncu --clock-control none --metrics $m -k regex:'^gatv2_(fwd|bwd)' /tmp/t/$b bench gatv2 --graph mol-16384 --heads 1 --feat 128 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gatv2-$b.txt 2>&1
  echo "== ncu $b rc=$? at $(($(date +%s) - start)) s"
done
scripts/ab.sh -b $(( 420 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'N=/tmp/t/N' 'C=/tmp/t/C' > /tmp/o/ab.txt <<'CASES'
gatv2 mol-16384 1 128
gt mol-16384 1 128
gat mol-16384 1 128
agnn mol-16384 1 128
gatv2 mol-16384 4 64
gatv2 gt-email-Enron 4 64
gt gt-email-Enron 4 64
gat gt-email-Enron 4 64
gt cora 4 32
gt batch-1024x120-d50 1 128
gatv2 batch-1024x120-d50 1 128
gatv2 er-1M-d16 1 128
gt er-1M-d16 4 64
gat er-1M-d16 4 64
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
tar -cJf $OUT/call2-out.tar.xz -C /tmp/o .
