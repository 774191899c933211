#!/usr/bin/env bash
# Call 3: where the dense-tile forward's time goes (ncu, one launch of each kernel, GT
# batch-1024x120-d50 1x128, B2 = call 2's binary).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call2.tar.xz -C /tmp/t B2
export DFGNN_BACKEND=cuda
ncu --clock-control none --kernel-name regex:gt_tiles --launch-count 1 --set full \
  /tmp/t/B2 bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto --forward-only --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-tiles-1x128.txt 2>&1
echo "ncu rc=$?"
grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc|Warp Cycles Per Issued|Stall|Bank Conflicts|Shared Memory|L2 Hit|Block Limit|Dynamic Shared|No Eligible|One or More|Compute \(SM\) Throughput|Memory Throughput" /tmp/o/ncu-tiles-1x128.txt | head -60
tar -cJf $OUT/call3-out.tar.xz -C /tmp/o .
