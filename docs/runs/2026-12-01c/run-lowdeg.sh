#!/usr/bin/env bash
# Investigation: why the fused forward loses on low-degree graphs and on GAT 1x128 batches.
B=target/release/dfgnn
export DFGNN_BACKEND=cuda
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== schedules, forward, 1x128 and 4x64"
for g in mol-16384 batch-1024x120-d50; do
  for m in gt gat gatv2; do
    for s in "1 128" "4 64"; do set -- $s
      $B bench $m --graph $g --heads $1 --feat $2 --forward-only --schedule row_tiled,edge_parallel,unfused --repeats 20 2>&1 | grep -v '^ *$'
    done
  done
done
echo "== launch options, GT mol-16384 1x128 forward row_tiled"
for o in "--block-threads 32" "--block-threads 64" "--block-threads 256" "--block-threads 512" "--units-per-block 8" "--units-per-block 16" "--units-per-block 64" "--max-slots 2" "--max-slots 4" "--natural-row-order"; do
  echo "-- $o"; $B bench gt --graph mol-16384 --heads 1 --feat 128 --forward-only --schedule row_tiled --repeats 20 $o 2>&1 | grep -E 'row_tiled|error'
done
echo "== launch options, GAT batch 1x128 forward row_tiled"
for o in "--block-threads 64" "--block-threads 256" "--block-threads 512" "--units-per-block 16" "--max-slots 2" "--max-slots 4" "--scalar-loads"; do
  echo "-- $o"; $B bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --forward-only --schedule row_tiled --repeats 20 $o 2>&1 | grep -E 'row_tiled|error'
done
mkdir -p $OUT
sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
echo "== ncu GT mol-16384 1x128 forward: row_tiled, unfused"
timeout 150 ncu $sec -k regex:'gt_fwd|sddmm|softmax|spmm|aggregate' $B bench gt --graph mol-16384 --heads 1 --feat 128 --forward-only --schedule row_tiled,unfused --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-gt-mol.txt 2>&1
grep -E '^  [a-z_]+.*\(|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit Reg|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Waves Per SM|Eligible Warps' $OUT/ncu-gt-mol.txt | head -120
echo "== ncu GAT batch 1x128 forward: row_tiled, unfused"
timeout 150 ncu $sec -k regex:'gat_fwd|gat_edge|gat_node|softmax|spmm|aggregate' $B bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --forward-only --schedule row_tiled,unfused --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-gat-batch.txt 2>&1
grep -E '^  [a-z_]+.*\(|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit Reg|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Waves Per SM|Eligible Warps' $OUT/ncu-gat-batch.txt | head -120
