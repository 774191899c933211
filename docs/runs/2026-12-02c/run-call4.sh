#!/usr/bin/env bash
# Call 4 (a4b3c32 + the head-lanes option): the GPU tests (the spread now includes fewer lanes
# per head), then an A/B of lanes per head (the plan's default against fewer: more slots per lane,
# more edges per warp step), forward and forward+backward, all in one tar.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
start=$(date +%s); left() { echo $(( ${1} - ($(date +%s) - start) )); }
mkdir -p /tmp/t /tmp/o && tar -xJf .gpu/call4.tar.xz -C /tmp/t
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1; echo "gpu-tests rc=$? at $(( $(date +%s) - start )) s" >> /tmp/o/gpu-tests.txt
export DFGNN_BACKEND=cuda
B=/tmp/t/dfgnn
run() { # model graph heads feat head_lanes
  [ "$(left 400)" -gt 0 ] || { echo "out of time before $*" >> /tmp/o/ab.txt; return; }
  local hl=(); [ "$5" = def ] || hl=(--head-lanes $5)
  r=$(timeout 60 $B bench $1 --graph $2 --heads $3 --feat $4 --schedule auto --repeats 10 "${hl[@]}" 2>&1 | grep -E '^auto|error')
  echo "$1 $2 $3x$4 head-lanes $5 | $r" >> /tmp/o/ab.txt
}
for g in batch-1024x120-d50 mol-16384 gt-email-Enron; do for model in gt gat; do
  for hl in def 16 8; do run $model $g 1 128 $hl; done
  for hl in def 8 4; do run $model $g 4 64 $hl; done
  for hl in def 4 2; do run $model $g 8 32 $hl; done
done; done
for hl in def 16 8; do run gatv2 batch-1024x120-d50 1 128 $hl; run agnn batch-1024x120-d50 1 128 $hl; done
for model in gt gat; do
  for hl in def 16 8; do run $model er-1M-d16 1 128 $hl; done
  for hl in def 8 4; do run $model er-1M-d16 4 64 $hl; done
done
echo "done at $(( $(date +%s) - start )) s" >> /tmp/o/ab.txt
tar -cJf $OUT/call4-out.tar.xz -C /tmp/o .
