#!/usr/bin/env bash
# Call 1 (sixteenth session): where GATv2's and GAT's time goes on mol-16384 1x128 (360 k rows of
# 1-3 edges), against turbo-gnn's GATv2 (faster there: 0.246 / 1.12 ms against 0.295 / 1.40):
# every kernel's duration under ncu, ncu's sections for the forwards and the backward passes of
# both, and the planner's options forced (rows per warp, threads per block) on the same cases.
# (The two turbo-gnn steps failed: pip installed the wheel where python3 does not look; call 3
# installs it with --target and PYTHONPATH, as scripts/bench-suite.sh does, and times it.)
start=$(date +%s)
mkdir -p /tmp/t /tmp/o /tmp/g
tar -xJf .gpu/call1.tar.xz -C /tmp/t
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
pip install --no-deps --no-index -q /tmp/t/turbo_gnn-*.whl > /tmp/o/pip.txt 2>&1
/tmp/t/F graph write mol-16384 /tmp/g/mol-16384.npz > /dev/null
m=gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes.sum
sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats"
for model in gatv2 gat; do
  for s in auto unfused; do
    timeout 60 ncu --clock-control none --metrics $m /tmp/t/F bench $model --graph mol-16384 --heads 1 --feat 128 \
      --schedule $s --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-$model-$s.txt 2>&1
    echo "== times $model $s rc=$? at $(($(date +%s) - start)) s"
  done
done
timeout 60 ncu --clock-control none --metrics $m python3 docs/runs/2026-12-04b/turbo-profile.py /tmp/g/mol-16384.npz 1 128 \
  > /tmp/o/ncu-times-turbo.txt 2>&1
echo "== times turbo rc=$? at $(($(date +%s) - start)) s"
for k in gatv2_fwd gatv2_bwd_rows gatv2_bwd_cols gat_bwd_cols gat_node_backward; do
  model=${k%%_*}
  timeout 60 ncu --clock-control none -k regex:"^$k" -c 1 $sec /tmp/t/F bench $model --graph mol-16384 --heads 1 --feat 128 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-sec-$k.txt 2>&1
  echo "== sections $k rc=$? at $(($(date +%s) - start)) s"
done
timeout 90 ncu --clock-control none -k regex:GATv2 -c 3 $sec python3 docs/runs/2026-12-04b/turbo-profile.py /tmp/g/mol-16384.npz 1 128 \
  > /tmp/o/ncu-sec-turbo.txt 2>&1
echo "== sections turbo rc=$? at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'F=/tmp/t/F' > /tmp/o/ab.txt <<'CASES'
gatv2 mol-16384 1 128
gatv2 mol-16384 1 128 --units-per-block 4
gatv2 mol-16384 1 128 --units-per-block 16
gatv2 mol-16384 1 128 --units-per-block 128
gatv2 mol-16384 1 128 --block-threads 64
gatv2 mol-16384 1 128 --block-threads 256
gatv2 mol-16384 1 128 --block-threads 32 --units-per-block 1
gat mol-16384 1 128
gat mol-16384 1 128 --schedule unfused,edge_parallel,row_tiled
gat mol-16384 1 128 --units-per-block 4
gat mol-16384 1 128 --block-threads 256
gatv2 mol-16384 4 64
gatv2 batch-1024x120-d50 1 128
gatv2 batch-1024x120-d50 1 128 --tiles off
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
