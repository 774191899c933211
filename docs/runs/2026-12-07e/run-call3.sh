#!/usr/bin/env bash
# Call 3 (thirty-fourth session). On an H200: the report's generated graphs, as call 1. Else:
# ncu of `gt_blocks_bwd_w4` on N (HEAD's device code) and B1 (call 2's), GT batch-1024x120-d50
# 1×128: details and SASS source pages, packed in one archive (call 2's separate files passed the
# limit of 8 files that come back). Archives as in call 2.
# Carry: .gpu/callb.tar.xz, .gpu/callr.tar.xz, .gpu/planetoid, .whl.
start=$(date +%s)
if grep -q H200 <(nvidia-smi -L); then
  bash docs/runs/2026-12-07d/run-call3.sh
  exit $?
fi
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
tar -xJf .gpu/callb.tar.xz -C /tmp/t B1
mkdir -p /tmp/o/ncu
k=gt_blocks_bwd_w4
for b in N B1/dfgnn; do
  name=${b%%/*}
  timeout 200 ncu --clock-control none --import-source no --kernel-name $k -c 1 \
    --set full --section SourceCounters \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$name /tmp/t/$b bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu/ncu-$name.log 2>&1
  ncu -i /tmp/o/$name.ncu-rep --print-details all > /tmp/o/ncu/ncu-$name.txt 2>&1
  ncu -i /tmp/o/$name.ncu-rep --page source --csv --print-source sass | gzip > /tmp/o/ncu/sass-$name.csv.gz
  echo "ncu of $name done at $(($(date +%s) - start)) s"
done
tar -C /tmp/o -cJf $OUT/ncu.tar.xz ncu
