#!/usr/bin/env bash
# Call 2: the GPU tests again, then the tiles after call 1's fix (loads of the staging and the
# counting batched, 16-byte staging when F % 4 == 0): B2 `auto` against B2 --dense-tiles false.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call2.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
export DFGNN_BACKEND=cuda
run() { # label binary extra-args model graph heads feat
  local label=$1 bin=$2 extra=$3; shift 3
  [ "$(left 540)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  r=$(timeout 90 /tmp/t/$bin bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 $extra 2>&1 | grep -E '^auto|error' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d50 8 32" "agnn batch-1024x120-d50 1 128" "agnn batch-1024x120-d50 4 64" "gt batch-1024x120-d50 4 32" "gt batch-1024x120-d50 2 33"; do
    run on B2 "--dense-tiles true" $c; run off B2 "--dense-tiles false" $c
  done
  if [ $round = 1 ]; then
    for c in "gt batch-1024x120-d20 1 128" "gt batch-1024x120-d10 1 128" "gt batch-1024x120-d10 4 64" "gt batch-4096x30-d10 4 64" "gt mol-16384 1 128" "gt batch-512x200-d60 4 64" "gt batch-512x200-d30 1 128"; do
      run on B2 "--dense-tiles true" $c; run off B2 "--dense-tiles false" $c
    done
  fi
  echo "round $round done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
done
sed -E 's/\| schedule .*plan auto +/| /' /tmp/o/ab.txt
tar -cJf $OUT/call2-out.tar.xz -C /tmp/o .
