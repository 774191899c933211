#!/usr/bin/env bash
# A/B: baseline (faf14fa), lazy rescale, + forward step 2, + cap 56; then launch-option sweep.
export DFGNN_BACKEND=cuda
mkdir -p /tmp/ab && tar -xJf .gpu/ab.tar.xz -C /tmp/ab
bins="faf14fa lazy step2 step2-cap56"
log=$OUT/ab.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $log
run() { # model graph heads feat extra...
  local m=$1 g=$2 h=$3 f=$4; shift 4
  for b in $bins; do
    r=$(/tmp/ab/dfgnn-$b bench $m --graph $g --heads $h --feat $f --schedule auto --repeats 15 "$@" 2>&1 | grep -E '^auto|error')
    echo "$m $g ${h}x$f $b | $r" | tee -a $log
  done
}
for rep in 1 2; do
run gt mol-16384 1 128
run gt mol-16384 4 64
run gat mol-16384 1 128
run gt batch-1024x120-d50 1 128
run gat batch-1024x120-d50 1 128
run gatv2 batch-1024x120-d50 1 128
run gt er-1M-d16 4 64
run gt er-1M-d16 1 128
run gat er-1M-d16 4 64
run gat er-1M-d16 1 128
run gatv2 er-1M-d16 1 128
run gt pl-1M-d16 4 64
run agnn er-1M-d16 4 64
done
echo "== launch options, GT mol-16384 1x128 forward row_tiled (lazy)" | tee -a $log
for o in "" "--block-threads 32" "--block-threads 64" "--block-threads 256" "--block-threads 512" "--units-per-block 8" "--units-per-block 16" "--units-per-block 64" "--natural-row-order"; do
  echo "-- $o $(/tmp/ab/dfgnn-lazy bench gt --graph mol-16384 --heads 1 --feat 128 --forward-only --schedule row_tiled --repeats 20 $o 2>&1 | grep -E '^row_tiled|error')" | tee -a $log
done
echo "== schedules (lazy)" | tee -a $log
for g in mol-16384 batch-1024x120-d50; do for m in gt gat gatv2; do
  /tmp/ab/dfgnn-lazy bench $m --graph $g --heads 1 --feat 128 --schedule row_tiled,edge_parallel,unfused --repeats 15 2>&1 | grep -E '^(row_tiled|edge_par|unfused)' | sed "s/^/$m $g /" | tee -a $log
done; done
