#!/usr/bin/env bash
# Call 1: the GPU tests with the dense tiles and the many-warp vector-gradient sum, then timings:
# A = 101d0f1 (the ninth session's end), B = A + the vector-gradient sum + GT's forward over
# dense tiles (`auto`), B with --dense-tiles false / true to isolate the tiles.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call1.tar.xz -C /tmp/t
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > /tmp/o/gpu.txt
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
export DFGNN_BACKEND=cuda
run() { # label binary extra-args model graph heads feat
  local label=$1 bin=$2 extra=$3; shift 3
  [ "$(left 540)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  r=$(timeout 90 /tmp/t/$bin bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 $extra 2>&1 | grep -E '^auto|error|plan|tiles' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d50 8 32" "agnn batch-1024x120-d50 1 128" "agnn batch-1024x120-d50 4 64"; do
    run A A "" $c; run B B "" $c; run B-off B "--dense-tiles false" $c
  done
  if [ $round = 1 ]; then
    for c in "gt batch-1024x120-d20 1 128" "gt batch-1024x120-d10 1 128" "gt batch-4096x30-d10 4 64" "gt mol-16384 1 128" "gt batch-512x200-d60 4 64"; do
      run B-on B "--dense-tiles true" $c; run B-off B "--dense-tiles false" $c
    done
  fi
  for c in "gat mol-16384 1 128" "gat mol-16384 4 64" "gat batch-1024x120-d50 1 128" "gatv2 batch-1024x120-d50 1 128" "gat er-1M-d16 4 64"; do
    run A A "" $c; run B B "" $c
  done
  echo "round $round done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
done
cat /tmp/o/ab.txt
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
