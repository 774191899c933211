#!/usr/bin/env bash
# Call 5 (nineteenth session): the GPU tests and the main job on P (`3e785d9` plus the forward
# combine's lanes splitting a row's chunks where F % 32 == 0, `combine_by_warp`); ncu of the
# forward combine of H (`9391f88`, the device code of `3e785d9`) and P; A/B of H and P where rows
# are split, twice.
start=$(date +%s)
mkdir -p /tmp/t /tmp/o
scripts/gpu-call.sh .gpu/call9.tar.xz P
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/graph-tool DFGNN_DATA_DIR=.gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/device.txt
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
m=gpu__time_duration.sum,launch__registers_per_thread
for c in "agnn gt-as-22july06 4 64" "gat gt-email-Enron 4 64" "gt gt-pgp-strong-2009 4 64" "agnn cora 4 32"; do
for b in H P; do
  set -- $c
  echo "=== $b $c"
  timeout 60 ncu --clock-control none --kernel-name regex:attention_fwd_combine --metrics $m /tmp/t/$b bench $1 --graph $2 --heads $3 --feat $4 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 2>&1 | grep -E "gpu__time|registers"
done
done > /tmp/o/ncu-combine.txt
echo "== ncu done at $(($(date +%s) - start)) s" | tee -a /tmp/o/ncu-combine.txt
cp /tmp/o/*.txt $OUT/
for round in 1 2; do
scripts/ab.sh -b $(( 220 + 70 * round - ($(date +%s) - start) )) 'H=/tmp/t/H' 'P=/tmp/t/P' >> /tmp/o/ab.txt <<'CASES'
agnn gt-as-22july06 4 64
gt gt-as-22july06 4 64
gat gt-email-Enron 4 64
agnn gt-email-Enron 4 64
agnn cora 4 32
gat pl-1M-d16 4 64
CASES
cp /tmp/o/*.txt $OUT/
done
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
