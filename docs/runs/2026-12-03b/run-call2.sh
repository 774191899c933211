#!/usr/bin/env bash
# Call 2: the planner's thresholds set from call 1 (dense tiles from 25 % filled, per-edge tiles
# from 8 edges per staged source row). The GPU tests, the main job on CUDA, and auto against the
# row passes (--tiles off) in two rounds, with GAT's unfused baseline and graphs that do not tile.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call2.tar.xz -C /tmp/t
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/o/gpu.txt
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
/tmp/t/F --backend cuda run > /tmp/o/main-job.txt 2>&1; echo "main job rc=$?" | tee -a /tmp/o/main-job.txt
export DFGNN_BACKEND=cuda
run() { # label extra-args model graph heads feat
  local label=$1 extra=$2; shift 2
  [ "$(left 500)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  case "$extra" in *--schedule*) ;; *) extra="--schedule auto $extra" ;; esac
  r=$(timeout 90 /tmp/t/F bench $1 --graph $2 --heads $3 --feat $4 --repeats 10 $extra 2>&1 | grep -E '^(auto|unfused) |error' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d20 1 128" "gt batch-1024x120-d10 1 128" \
           "gt batch-4096x30-d10 4 64" "gt batch-512x200-d60 4 64" "gt mol-16384 1 128" "gt mol-16384 4 64" \
           "agnn batch-1024x120-d50 1 128" "agnn mol-16384 4 64" "gat batch-1024x120-d50 1 128" "gat batch-1024x120-d50 4 64" \
           "gat mol-16384 1 128" "gat batch-4096x30-d10 4 64" "gatv2 batch-1024x120-d50 1 128" "gatv2 batch-1024x120-d50 4 64" "gatv2 mol-16384 1 128"; do
    run auto "" $c; run off "--tiles off" $c
  done
  echo "round $round done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
done
run unfused "--schedule unfused" gat batch-1024x120-d50 1 128
for c in "gt er-1M-d16 4 64" "gat er-1M-d16 4 64" "gt cora 4 32" "gat cora 4 32"; do run auto "" $c; done
cat /tmp/o/ab.txt
tar -cJf $OUT/call2-out.tar.xz -C /tmp/o .
