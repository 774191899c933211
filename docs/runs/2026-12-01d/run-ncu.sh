#!/usr/bin/env bash
# ncu of GAT's forward+backward after this session's changes (13835d3), and a launch-size sweep.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
start=$(date +%s)
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct
for shape in "4 64" "1 128"; do set -- $shape
  timeout 150 ncu --metrics $m --csv target/release/dfgnn bench gat --graph er-1M-d16 --heads $1 --feat $2 --schedule auto --repeats 1 --warmup 0 > $OUT/ncu-gat-er1m-$1x$2.csv 2> $OUT/ncu-gat-er1m-$1x$2.err
done
echo "ncu done $(( $(date +%s) - start )) s" > $OUT/sweep.txt
for bt in 64 128 256; do for upb in "" ; do
  r=$(target/release/dfgnn bench gat --graph er-1M-d16 --heads 4 --feat 64 --schedule auto --repeats 10 --block-threads $bt 2>&1 | grep -E '^auto|error')
  echo "gat er-1M-d16 4x64 block-threads $bt | $r" >> $OUT/sweep.txt
  r=$(target/release/dfgnn bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --repeats 10 --block-threads $bt 2>&1 | grep -E '^auto|error')
  echo "gat batch 1x128 block-threads $bt | $r" >> $OUT/sweep.txt
  r=$(target/release/dfgnn bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --repeats 10 --block-threads $bt 2>&1 | grep -E '^auto|error')
  echo "gt batch 1x128 block-threads $bt | $r" >> $OUT/sweep.txt
done; done
echo "done $(( $(date +%s) - start )) s" >> $OUT/sweep.txt
