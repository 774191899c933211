#!/usr/bin/env bash
# Call 2 (twenty-sixth session): why GT's forward over dense tiles and backward over closed blocks
# stall on batch-1024x120-d50 1x128, with K (`06bc6e7`): each kernel's warp stall reasons per
# issued instruction, and its SASS with the sampled stalls per instruction (ncu's source page).
start=$(date +%s)
. scripts/gpu-env.sh
tar -xJf .gpu/call1.tar.xz -C /tmp/t
cp /tmp/o/device.txt $OUT/
for k in gt_tiles_fwd_w4 gt_blocks_bwd_w4; do
  timeout 150 ncu --clock-control none --import-source no --kernel-name $k -c 1 \
    --section WarpStateStats --section SourceCounters --section InstructionStats \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$k /tmp/t/K bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$k.log 2>&1
  ncu -i /tmp/o/$k.ncu-rep --print-details all > $OUT/ncu-$k.txt 2>&1
  ncu -i /tmp/o/$k.ncu-rep --page source --csv --print-source sass > $OUT/sass-$k.csv 2>&1
  echo "$k done at $(($(date +%s) - start)) s"
done
