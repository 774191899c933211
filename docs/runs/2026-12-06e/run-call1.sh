#!/usr/bin/env bash
# Call 1 (twenty-sixth session): where the batch graph's kernels spend their time, with K
# (`06bc6e7`, the closed blocks under auto): ncu's full set of GT's forward over dense tiles and
# backward over closed blocks, and of GAT's forward and backward kernels, on
# batch-1024x120-d50 1x128, one forward+backward each.
start=$(date +%s)
. scripts/gpu-env.sh
tar -xJf .gpu/call1.tar.xz -C /tmp/t
cp /tmp/o/device.txt $OUT/
timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:'gt_(tiles|blocks)' \
  /tmp/t/K bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --warmup 0 --repeats 1 \
  --input-sets 1 > $OUT/ncu-gt.txt 2>&1
echo "gt done at $(($(date +%s) - start)) s"
timeout 250 ncu --clock-control none --set full --import-source no --kernel-name regex:'gat_|attention_' \
  /tmp/t/K bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --warmup 0 --repeats 1 \
  --input-sets 1 > $OUT/ncu-gat.txt 2>&1
echo "done at $(($(date +%s) - start)) s"
