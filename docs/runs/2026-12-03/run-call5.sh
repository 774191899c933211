#!/usr/bin/env bash
# Call 5: the final tree (F): the GPU tests, the main job on CUDA, compute-sanitizer on the
# dense-tile kernels, and F against A = 101d0f1 (and F with --dense-tiles false).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call5.tar.xz -C /tmp/t
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/o/gpu.txt
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
tail -2 /tmp/o/gpu-tests.txt
/tmp/t/F --backend cuda run > /tmp/o/main-job.txt 2>&1; echo "main job rc=$?" | tee -a /tmp/o/main-job.txt
for tool in memcheck racecheck synccheck initcheck; do
  for shape in "1 128" "2 33"; do
    set -- $shape
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench gt --graph batch-16x120-d50 --heads $1 --feat $2 --schedule auto --dense-tiles true --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1x$2.txt 2>&1
    echo "compute-sanitizer $tool $1x$2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1x$2.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
export DFGNN_BACKEND=cuda
run() { # label binary extra-args model graph heads feat
  local label=$1 bin=$2 extra=$3; shift 3
  [ "$(left 540)" -gt 0 ] || { echo "out of time before $label $*" >> /tmp/o/ab.txt; return; }
  r=$(timeout 90 /tmp/t/$bin bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 $extra 2>&1 | grep -E '^auto|error' | tr '\n' ' ')
  echo "$label $1 $2 $3x$4 | $r" >> /tmp/o/ab.txt
}
for round in 1 2; do
  for c in "gt batch-1024x120-d50 1 128" "gt batch-1024x120-d50 4 64" "gt batch-1024x120-d50 8 32" "gt batch-1024x120-d50 4 32" "agnn batch-1024x120-d50 1 128" "agnn batch-1024x120-d50 4 64" "gt batch-512x200-d60 4 64"; do
    run A A "" $c; run F F "" $c; run F-off F "--dense-tiles false" $c
  done
  if [ $round = 1 ]; then
    for c in "gt batch-1024x120-d20 1 128" "gt mol-16384 1 128" "gt er-1M-d16 4 64" "gt pl-1M-d16 4 64"; do
      run A A "" $c; run F F "" $c
    done
  fi
  echo "round $round done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
done
sed -E 's/\| schedule .*plan auto +/| /' /tmp/o/ab.txt
tar -cJf $OUT/call5-out.tar.xz -C /tmp/o .
