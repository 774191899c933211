#!/usr/bin/env bash
# Call 1 (eleventh session): the per-edge tile kernel. The GPU tests, compute-sanitizer on the
# per-edge kernel, and the GT/AGNN forward over the row passes (--tiles off), the dense tiles
# (--tiles dense), the per-edge tiles (--tiles edges) and auto, on batches of small graphs; GAT's
# and GATv2's per-edge tiles against their row passes and unfused baselines.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call1.tar.xz -C /tmp/t
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/o/gpu.txt
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
for tool in memcheck racecheck synccheck initcheck; do
  for shape in "1 128" "2 33"; do
    set -- $shape
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench gt --graph batch-16x120-d50 --heads $1 --feat $2 --schedule auto --tiles edges --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1x$2.txt 2>&1
    echo "compute-sanitizer $tool $1x$2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1x$2.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
  compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench gat --graph batch-16x120-d50 --heads 2 --feat 36 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-gat.txt 2>&1
  echo "compute-sanitizer $tool gat 2x36 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-gat.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
done
export DFGNN_BACKEND=cuda
run() { # label extra-args model graph heads feat
  local label=$1 extra=$2; shift 2
  [ "$(left 560)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  case "$extra" in *--schedule*) ;; *) extra="--schedule auto $extra" ;; esac
  r=$(timeout 90 /tmp/t/F bench $1 --graph $2 --heads $3 --feat $4 --repeats 10 $extra 2>&1 | grep -E '^(auto|unfused) |error' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d50 8 32" "gt batch-1024x120-d50 4 32" \
         "gt batch-1024x120-d20 1 128" "gt batch-1024x120-d20 4 64" "gt batch-1024x120-d10 1 128" "gt batch-4096x30-d10 4 64" \
         "gt batch-512x200-d60 4 64" "gt mol-16384 1 128" "gt mol-16384 4 64" "agnn batch-1024x120-d50 1 128" "agnn mol-16384 4 64"; do
  run auto "" $c; run off "--tiles off" $c; run dense "--tiles dense" $c; run edges "--tiles edges" $c
done
for c in "gat batch-1024x120-d50 1 128" "gat batch-1024x120-d50 4 64" "gat mol-16384 1 128" "gat batch-4096x30-d10 4 64" \
         "gatv2 batch-1024x120-d50 1 128" "gatv2 mol-16384 1 128" "gatv2 batch-1024x120-d50 4 64"; do
  run auto "" $c; run off "--tiles off" $c; run edges "--tiles edges" $c; run unfused "--schedule unfused" $c
done
echo "round 1 done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
for c in "gt er-1M-d16 4 64" "gt pl-1M-d16 4 64"; do run auto "" $c; done
cat /tmp/o/ab.txt
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
