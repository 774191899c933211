#!/usr/bin/env bash
# Call 1 (fourteenth session): the per-edge tiles' scores by a group of 8 lanes per edge (F1)
# against `0beebc7` (O). turbo-gnn's wheel built from its PyPI sdist in the background (for the
# report's call), the GPU tests and the main job on F1, compute-sanitizer over the per-edge tile
# kernels of GT and GATv2; once the build is done, ncu's kernel times of GATv2's batch forward
# and the A/B timings.
start=$(date +%s)
mkdir -p /tmp/o /tmp/turbo /tmp/o/whl
tar -xzf .whl/turbo_gnn-0.1.0rc4.tar.gz -C /tmp/turbo
(cd /tmp/turbo/turbo_gnn-0.1.0rc4 && MAX_JOBS=12 TORCH_CUDA_ARCH_LIST=9.0 TURBO_GNN_FORCE_BUILD=TRUE \
  python3 -m pip wheel --no-build-isolation --no-deps --no-index -w /tmp/o/whl . > /tmp/o/turbo-build.txt 2>&1;
  echo "turbo-gnn wheel rc=$? at $(($(date +%s) - start)) s" >> /tmp/o/turbo-build.txt) &
build=$!
scripts/gpu-call.sh .gpu/call1.tar.xz F1
for tool in memcheck racecheck synccheck initcheck; do
  for c in "gatv2 3 33" "gatv2 1 128" "gatv2 2 7" "gt 2 32" "gt 1 100" "agnn 3 7"; do
    set -- $c
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F1 --backend cuda bench $1 --graph batch-16x120-d50 --heads $2 --feat $3 --schedule auto --tiles edges --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-$tool-$1-$2x$3.txt 2>&1
    echo "compute-sanitizer $tool $1 $2x$3 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-$tool-$1-$2x$3.txt | tr '\n' ' ')" | tee -a /tmp/o/sanitizer.txt
  done
done
echo "sanitizer done at $(($(date +%s) - start)) s"
wait $build
tail -n 3 /tmp/o/turbo-build.txt; ls -la /tmp/o/whl
export DFGNN_BACKEND=cuda
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for b in F1 O; do
  timeout 60 ncu --clock-control none --metrics $m /tmp/t/$b bench gatv2 --graph batch-1024x120-d50 --heads 1 --feat 128 \
    --schedule auto --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gatv2-$b.txt 2>&1
  echo "ncu $b rc=$?"
done
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'F1=/tmp/t/F1' 'old=/tmp/t/O' > /tmp/o/ab.txt <<'CASES'
gatv2 batch-1024x120-d50 1 128
gt batch-1024x120-d50 1 128 --tiles edges
gatv2 batch-1024x120-d50 4 64
gatv2 batch-1024x120-d50 8 32
gt batch-4096x30-d10 4 64
agnn batch-4096x30-d10 4 64
gatv2 batch-4096x30-d10 4 64
gatv2 batch-1024x120-d50 2 7
gatv2 batch-512x200-d60 4 64
gt batch-1024x120-d50 4 64 --tiles edges
gatv2 batch-1024x120-d50 1 256
CASES
cat /tmp/o/ab.txt
cp /tmp/o/whl/*.whl $OUT/ 2>/dev/null
rm -rf /tmp/o/whl
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
