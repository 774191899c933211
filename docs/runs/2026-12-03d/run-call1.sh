#!/usr/bin/env bash
# Call 1 (thirteenth session): the GPU tests and the main job on `5092f12` (the dense tiles' row
# reductions through reduce's butterflies), then where the batch cases' time goes: every
# kernel's duration under ncu for GT, GAT and GATv2 batch-1024x120-d50 1x128 forward+backward,
# and ncu's full set for the GATv2 per-edge tile forward and GT's backward passes.
scripts/gpu-call.sh .gpu/call1.tar.xz
export DFGNN_BACKEND=cuda
m=gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,launch__shared_mem_per_block_dynamic
for model in gt gat gatv2 agnn; do
  timeout 100 ncu --clock-control none --metrics $m /tmp/t/F bench $model --graph batch-1024x120-d50 --heads 1 --feat 128 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-$model.txt 2>&1
  echo "== $model rc=$?"
  grep -E "^  [a-z_0-9]+ |Duration|Registers" /tmp/o/ncu-times-$model.txt | paste - - - | awk '{print $1, $(NF)}' | head -0
done
for k in gatv2_tile_edges gt_bwd_rows gt_bwd_cols gat_tile_cols; do
  model=${k%%_*}
  timeout 120 ncu --clock-control none --kernel-name regex:$k --launch-count 1 --set full /tmp/t/F bench $model \
    --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-full-$k.txt 2>&1
  echo "== full $k rc=$?"
done
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
