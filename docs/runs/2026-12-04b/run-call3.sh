#!/usr/bin/env bash
# Call 3 (sixteenth session): GATv2's column pass writing d xl as one sum (M:
# ScoreGradient::key_into_value; the separate add kernel gone) against HEAD `0e4e681` (F), and M
# with GATv2's forward capped at 64 registers instead of 56 (M64). The GPU tests and the main
# job on M, compute-sanitizer over GATv2's backward (split columns on email-Enron), ncu's kernel
# times of M's GATv2 on mol-16384 1x128, then the A/B timings, and turbo-gnn's GATv2 timed in the
# same call on the same graphs' files.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call3.tar.xz M
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data DFGNN_BACKEND=cuda
TOOLS="memcheck racecheck initcheck" scripts/gpu-sanitize.sh /tmp/t/M gt-email-Enron 'gatv2 2 256' 'gatv2 4 64' 'gatv2 3 33' > /dev/null
cat /tmp/o/sanitizer.txt
m=gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes.sum
timeout 60 ncu --clock-control none --metrics $m /tmp/t/M bench gatv2 --graph mol-16384 --heads 1 --feat 128 \
  --schedule auto --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/ncu-times-gatv2-M.txt 2>&1
echo "== ncu rc=$? at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 400 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'M=/tmp/t/M' 'M64=/tmp/t/M64' > /tmp/o/ab.txt <<'CASES'
gatv2 mol-16384 1 128
gatv2 mol-16384 4 64
gatv2 batch-1024x120-d50 1 128
gatv2 gt-email-Enron 4 64
gatv2 cora 4 32
gatv2 er-1M-d16 4 64
gatv2 er-1M-d16 1 128
gatv2 pl-1M-d16 4 64
gatv2 mol-16384 1 128
CASES
cat /tmp/o/ab.txt
mkdir -p /tmp/g .whl/site
/tmp/t/M graph write mol-16384 /tmp/g/mol-16384.npz > /dev/null
/tmp/t/M graph write batch-1024x120-d50 /tmp/g/batch-1024x120-d50.npz > /dev/null
python3 -m pip install --quiet --no-deps --no-index --target .whl/site /tmp/t/turbo_gnn-*.whl > /tmp/o/pip.txt 2>&1
PYTHONPATH=$PWD/.whl/site timeout 120 python3 docs/runs/2026-12-04b/turbo-time.py 1 128 /tmp/g/mol-16384.npz \
  /tmp/g/batch-1024x120-d50.npz > /tmp/o/turbo.txt 2>&1
PYTHONPATH=$PWD/.whl/site timeout 60 python3 docs/runs/2026-12-04b/turbo-time.py 4 64 /tmp/g/mol-16384.npz >> /tmp/o/turbo.txt 2>&1
cat /tmp/o/turbo.txt
echo "done at $(($(date +%s) - start)) s"
tar -cJf $OUT/call3-out.tar.xz -C /tmp/o .
