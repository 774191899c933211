#!/usr/bin/env bash
# Call 2 (eighteenth session): N = `798da65` (GAT's node scores, its row pass from the part and AGNN's normalisation on
# the node-row layout: 16-byte loads, a group of lanes per (node, head) pair; the binding's part
# and stats fixes), with the GPU tests and the main job on it; ncu of the node-scores kernel; then, from the seventeenth session's archive
# (`.gpu/call2.tar.xz`: A = `aa62668`, F = `52f0059` + --positive-part, F2 = `82aa186`,
# S96 / S80 = F with GAT's W4 S1 kernels at twice the edges per step, capped at 96 / 80):
# GAT F2 against N, AGNN A, F2 and N on issue 10's cases, GAT's step variants, and GAT's
# positive part on the graphs of mean degree 7-9.
start=$(date +%s)
mkdir -p /tmp/t /tmp/t2 /tmp/o .gpu/data && ln -sfn "$PWD/.gpu/graph-tool" .gpu/data/graph-tool
scripts/gpu-call.sh .gpu/call4.tar.xz N
tar -xJf .gpu/call2.tar.xz -C /tmp/t2 ./A ./F ./F2 ./S96 ./S80
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum
for b in /tmp/t2/F2 /tmp/t/N; do
  for shape in "4 64" "1 128"; do
    set -- $shape
    timeout 60 ncu --clock-control none --kernel-name 'regex:gat_node_scores|gat_part_rows' --metrics $m $b bench gat --graph er-1M-d16 \
      --heads $1 --feat $2 --schedule auto --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -E "gat_node_scores|gat_part_rows|dram__bytes|gpu__time|registers|warps_active" | head -30
  done
done > /tmp/o/ncu-node-scores.txt
cat /tmp/o/ncu-node-scores.txt
echo "== ncu done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'F2=/tmp/t2/F2' 'N=/tmp/t/N' > /tmp/o/ab.txt <<'CASES'
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat mol-16384 1 128
gat pl-1M-d16 4 64
gat gt-email-Enron 4 64
CASES
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 380 - ($(date +%s) - start) )) 'A=/tmp/t2/A' 'F2=/tmp/t2/F2' 'N=/tmp/t/N' >> /tmp/o/ab.txt <<'CASES'
agnn er-1M-d16 1 128
agnn gt-as-22july06 4 64
agnn gt-email-Enron 4 64
CASES
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 470 - ($(date +%s) - start) )) 'F=/tmp/t2/F' 'S96=/tmp/t2/S96' 'S80=/tmp/t2/S80' >> /tmp/o/ab.txt <<'CASES'
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
CASES
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 540 - ($(date +%s) - start) )) 'on=/tmp/t/N --positive-part true' 'off=/tmp/t/N --positive-part false' >> /tmp/o/ab.txt <<'CASES'
gat gt-pgp-strong-2009 4 64
gat gt-cond-mat-2005 4 64
gat gt-cond-mat-2005 1 128
gat mol-16384 1 128 --schedule unfused
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
