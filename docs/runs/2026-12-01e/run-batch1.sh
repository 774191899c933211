#!/usr/bin/env bash
# Batch-of-small-graphs exploration: ncu of the fused forwards, then a sweep of forced options.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
start=$(date +%s)
B=target/release/dfgnn
G=batch-1024x120-d50
for m in gat gt; do
  timeout 120 ncu --set full -k regex:"^${m}_fwd" -c 1 $B bench $m --graph $G --heads 1 --feat 128 --schedule auto --repeats 1 --warmup 0 --forward-only > $OUT/ncu-$m-batch.txt 2>&1
done
timeout 60 ncu --set full -k regex:"unfused_spmm" -c 1 $B bench gat --graph $G --heads 1 --feat 128 --schedule unfused --repeats 1 --warmup 0 --forward-only > $OUT/ncu-spmm-batch.txt 2>&1
echo "ncu done $(( $(date +%s) - start )) s" > $OUT/sweep.txt
run() { r=$($B bench "$@" --repeats 10 2>&1 | grep -E '^[a-z_]+ +[0-9.]+ |error'); echo "$* |" >> $OUT/sweep.txt; echo "$r" >> $OUT/sweep.txt; }
for m in gat gt agnn; do
  run $m --graph $G --heads 1 --feat 128 --schedule auto,row_tiled,row_split,row_group,edge_parallel,unfused
  run $m --graph $G --heads 1 --feat 128 --schedule row_group --group-staging true
  run $m --graph $G --heads 1 --feat 128 --schedule auto --natural-row-order
  for u in 2 8 30; do run $m --graph $G --heads 1 --feat 128 --schedule auto --natural-row-order --units-per-block $u --block-threads 128; done
  run $m --graph $G --heads 4 --feat 64 --schedule auto,unfused
done
echo "done $(( $(date +%s) - start )) s" >> $OUT/sweep.txt
