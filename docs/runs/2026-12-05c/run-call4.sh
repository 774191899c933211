#!/usr/bin/env bash
# Call 4 (nineteenth session): the GPU tests and the main job on F (`9d40990`: the factored row
# pass reverted, the forward combine of `9bae783`); ncu of the combine kernels of H (`9391f88`,
# the old combine), F and C8 (F's combine with eight partials in flight; built at `9f814e4`, with
# the factored row pass: its forward only compares); then A/B of H, F and C8 where rows are split, twice.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
scripts/gpu-call.sh .gpu/call8.tar.xz F
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
m=gpu__time_duration.sum,launch__registers_per_thread
for c in "agnn gt-as-22july06 4 64" "gat gt-email-Enron 4 64" "gt gt-pgp-strong-2009 4 64"; do
for b in H F C8; do
  set -- $c
  echo "=== $b $c"
  timeout 60 ncu --clock-control none --kernel-name regex:attention_fwd_combine --metrics $m /tmp/t/$b bench $1 --graph $2 --heads $3 --feat $4 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -E "gpu__time|registers"
done
done > /tmp/o/ncu-combine.txt
echo "== ncu done at $(($(date +%s) - start)) s" | tee -a /tmp/o/ncu-combine.txt
cp /tmp/o/*.txt $OUT/
for round in 1 2; do
scripts/ab.sh -b $(( 250 + 100 * round - ($(date +%s) - start) )) 'H=/tmp/t/H' 'F=/tmp/t/F' 'C8=/tmp/t/C8' >> /tmp/o/ab.txt <<'CASES'
agnn gt-as-22july06 4 64
gt gt-as-22july06 4 64
gat gt-email-Enron 4 64
agnn cora 4 32
CASES
cp /tmp/o/*.txt $OUT/
done
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
