#!/usr/bin/env bash
# Call 1 (seventeenth session): AGNN's column pass does the normalisation's backward (writes dh
# and dβ's shares; no dk, dv, no agnn_normalize_backward launch) in F, against `aa62668` (A):
# the GPU tests and the main job on F, compute-sanitizer over AGNN's backward (split columns on
# email-Enron), every kernel's time under ncu for AGNN er-1M-d16 1x128 (A, F) and GAT er-1M-d16
# 4x64 (where GAT's backward goes), then A/B timings, and GAT with and without the positive part
# (F's new --positive-part option: off, the training forward is the plain one and the backward's
# row pass gathers).
start=$(date +%s)
mkdir -p .gpu/data && ln -sfn "$PWD/.gpu/graph-tool" .gpu/data/graph-tool
scripts/gpu-call.sh .gpu/call1.tar.xz F
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
echo "== gpu-call done at $(($(date +%s) - start)) s"
TOOLS="memcheck racecheck initcheck" scripts/gpu-sanitize.sh /tmp/t/F gt-email-Enron 'agnn 2 256' 'agnn 4 64' 'agnn 3 33' > /dev/null
cat /tmp/o/sanitizer.txt
echo "== sanitizer done at $(($(date +%s) - start)) s"
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes.sum
for b in A F; do
  timeout 90 ncu --clock-control none --metrics $m /tmp/t/$b bench agnn --graph er-1M-d16 --heads 1 --feat 128 \
    --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-agnn-$b.txt 2>&1
  echo "== ncu agnn $b rc=$? at $(($(date +%s) - start)) s"
done
timeout 90 ncu --clock-control none --metrics $m /tmp/t/F bench gat --graph er-1M-d16 --heads 4 --feat 64 \
  --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gat-F.txt 2>&1
echo "== ncu gat rc=$? at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) 'A=/tmp/t/A' 'F=/tmp/t/F' > /tmp/o/ab.txt <<'CASES'
agnn er-1M-d16 1 128
agnn er-1M-d16 4 64
agnn pl-1M-d16 4 64
agnn gt-as-22july06 4 64
agnn gt-email-Enron 4 64
agnn gt-pgp-strong-2009 4 64
agnn mol-16384 1 128
agnn batch-1024x120-d50 1 128
gt er-1M-d16 4 64
agnn er-1M-d16 1 128
agnn gt-as-22july06 4 64
CASES
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'off=/tmp/t/F --positive-part false' >> /tmp/o/ab.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 4 64
gat gt-email-Enron 4 64
gat gt-as-22july06 4 64
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat mol-16384 1 128 --schedule unfused
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
