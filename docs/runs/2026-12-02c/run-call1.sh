#!/usr/bin/env bash
# Call 1 (at a4b3c32): turbo-gnn's wheel for the report (built in the background), ncu's L2 hit
# rate and DRAM bytes of each model's forward on every tuning-set graph of about 100 k edges or
# more (issue 10's bandwidth target), then the same forwards timed (after the build, so that the
# compile does not share the CPU with them).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t && tar -xJf .gpu/call1.tar.xz -C /tmp/t
B=/tmp/t/dfgnn
( cd /tmp && mkdir -p whl && TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE MAX_JOBS=12 \
    python3 -m pip wheel --no-build-isolation --no-deps -w /tmp/whl /tmp/t/turbo_gnn-0.1.0rc4.tar.gz \
    > $OUT/turbo-build.txt 2>&1; echo "turbo rc=$? at $(( $(date +%s) - start )) s" >> $OUT/turbo-build.txt ) &
turbo=$!
graphs="er-1M-d16 pl-1M-d16 batch-1024x120-d50 mol-16384 gt-email-Enron gt-as-22july06 gt-pgp-strong-2009 gt-cond-mat-2005 gt-astro-ph"
m=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
for g in $graphs; do for model in gt agnn gat; do
  [ "$(left 330)" -gt 0 ] || { echo "ncu: out of time before $model $g" >> $OUT/ncu-log.txt; break 2; }
  timeout 120 ncu --metrics $m --csv $B bench $model --graph $g --heads 4 --feat 64 --forward-only --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$model-$g.csv 2> $OUT/ncu-$model-$g.err
  echo "$model $g rc=$? at $(( $(date +%s) - start )) s" >> $OUT/ncu-log.txt
done; done
wait $turbo
cp /tmp/whl/turbo_gnn-*.whl $OUT/ 2>/dev/null
for g in $graphs; do for model in gt agnn gat; do
  [ "$(left 560)" -gt 0 ] || { echo "timed: out of time before $model $g" >> $OUT/timed.txt; break 2; }
  echo "== $model $g 4x64" >> $OUT/timed.txt
  timeout 60 $B bench $model --graph $g --heads 4 --feat 64 --forward-only --schedule auto --repeats 10 >> $OUT/timed.txt 2>&1
done; done
echo "done at $(( $(date +%s) - start )) s" >> $OUT/timed.txt
