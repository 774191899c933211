#!/usr/bin/env bash
# Call 1 (thirty-fourth session). On an H200: the report's generated graphs on HEAD's device code
# (as `docs/runs/2026-12-07d/run-call3.sh`, whose archive `.gpu/callr.tar.xz` holds Y's binary N,
# built at `4389ecc`, and the wheel). On any other GPU: ncu on N, GT batch-1024x120-d50 1×128,
# the closed blocks' backward `gt_blocks_bwd_w4` and the dense tile forward `gt_tiles_fwd_w4`
# (stall reasons, instruction mix, SASS source page for docs/runs/2026-12-06e/sass-regions.py).
# Carry: .gpu/callr.tar.xz, .gpu/planetoid, .whl.
start=$(date +%s)
if grep -q H200 <(nvidia-smi -L); then
  bash docs/runs/2026-12-07d/run-call3.sh
  exit $?
fi
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
for k in gt_blocks_bwd_w4 gt_tiles_fwd_w4; do
  timeout 200 ncu --clock-control none --import-source no --kernel-name $k -c 1 --set full \
    --section SourceCounters \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$k /tmp/t/N bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$k.log 2>&1
  ncu -i /tmp/o/$k.ncu-rep --print-details all > $OUT/ncu-$k.txt 2>&1
  ncu -i /tmp/o/$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/sass-$k.csv.gz
  echo "ncu of $k done at $(($(date +%s) - start)) s"
done
