#!/usr/bin/env bash
# Call 3 (at a4b3c32): call 1 again without the turbo-gnn build (its wheel came back; its other
# files did not: a call returns at most 8 files, so this one packs them into one tar).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call1.tar.xz -C /tmp/t
B=/tmp/t/dfgnn
graphs="er-1M-d16 pl-1M-d16 batch-1024x120-d50 mol-16384 gt-email-Enron gt-as-22july06 gt-pgp-strong-2009 gt-cond-mat-2005 gt-astro-ph"
m=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
for g in $graphs; do for model in gt agnn gat; do
  [ "$(left 250)" -gt 0 ] || { echo "ncu: out of time before $model $g" >> /tmp/o/ncu-log.txt; break 2; }
  timeout 120 ncu --metrics $m --csv $B bench $model --graph $g --heads 4 --feat 64 --forward-only --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-$model-$g.csv 2> /tmp/o/ncu-$model-$g.err
  echo "$model $g rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/ncu-log.txt
done; done
for g in $graphs; do for model in gt agnn gat; do
  [ "$(left 420)" -gt 0 ] || { echo "timed: out of time before $model $g" >> /tmp/o/timed.txt; break 2; }
  echo "== $model $g 4x64" >> /tmp/o/timed.txt
  timeout 60 $B bench $model --graph $g --heads 4 --feat 64 --forward-only --schedule auto --repeats 10 >> /tmp/o/timed.txt 2>&1
done; done
echo "done at $(( $(date +%s) - start )) s" >> /tmp/o/timed.txt
tar -cJf $OUT/call3-out.tar.xz -C /tmp/o .
