#!/usr/bin/env bash
# Call 2 (twenty-first session): where GAT's backward passes spend their time on mol-16384 1x128
# (360 k rows of about 2 edges; `auto` trails `unfused` there): ncu's speed of light, occupancy,
# scheduler and warp-state sections of the row and column passes and of the unfused baseline's
# SDDMM and transposed SpMM, one forward+backward each, with R (`cd5b53b`, main's device code).
start=$(date +%s)
. scripts/gpu-env.sh
tar -xJf .gpu/call13.tar.xz -C /tmp/t
cp /tmp/o/device.txt $OUT/
sections="--section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis"
timeout 200 ncu --clock-control none --kernel-name regex:'gat_bwd_(rows|cols)' $sections /tmp/t/R bench gat --graph mol-16384 \
  --heads 1 --feat 128 --schedule auto --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-fused.txt 2>&1
echo "fused done at $(($(date +%s) - start)) s"
timeout 200 ncu --clock-control none --kernel-name regex:'unfused_(sddmm|spmm)' $sections /tmp/t/R bench gat --graph mol-16384 \
  --heads 1 --feat 128 --schedule unfused --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-unfused.txt 2>&1
echo "done at $(($(date +%s) - start)) s"
