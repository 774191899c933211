#!/usr/bin/env bash
# Call 6: V6 = the tiles with warps skipping row groups past the tile in the aggregation and
# 8-byte output stores, against F = a5ca8e1; V6's GPU tests first.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call6.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
export DFGNN_BACKEND=cuda
run() { # label binary model graph heads feat
  local label=$1 bin=$2; shift 2
  [ "$(left 300)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  r=$(timeout 90 /tmp/t/$bin bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 --forward-only 2>&1 | grep -E '^auto|error' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d50 8 32" "gt batch-512x200-d60 4 64" "gt batch-1024x120-d50 2 33"; do
    run F F $c; run V6 V6 $c
  done
done
sed -E 's/\| schedule .*plan auto +/| /' /tmp/o/ab.txt
tar -cJf $OUT/call6-out.tar.xz -C /tmp/o .
