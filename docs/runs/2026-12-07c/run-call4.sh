#!/usr/bin/env bash
# Call 4 (thirty-second session): where GAT's per-edge tile forward spends its instructions now,
# with R (`309edb4`), as call 1 measured it with P: ncu's full set and the SASS source page of
# `gat_tile_edges_fwd_w4` on batch-1024x120-d50 1x128. The archive is call 3's.
# Carry: .gpu/callr3.tar.xz, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr3.tar.xz -C /tmp/t
k=gat_tile_edges_fwd_w4
timeout 200 ncu --clock-control none --import-source no --kernel-name $k -c 1 --set full \
  --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
  -o /tmp/o/$k /tmp/t/R bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
  --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$k.log 2>&1
ncu -i /tmp/o/$k.ncu-rep --print-details all > $OUT/ncu-$k.txt 2>&1
ncu -i /tmp/o/$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/sass-$k.csv.gz
echo "done at $(($(date +%s) - start)) s"
