#!/usr/bin/env bash
# Call 2 (fifteenth session): AGNN as a model of its own in the template (F): its fused forward
# *and* backward passes make each key from the gathered value and the source's inverse norm
# (`CosineScore` with its gradients), so `hn` is stored only for GT's forward over tiles and the
# baselines. Against `05d9326` (B), and F with the default layout's AGNN kernels capped as GT's
# (K1: forward 56, row pass 72, column pass 80 registers; K2: the forward at 64). The GPU tests
# and the main job on F, compute-sanitizer over AGNN forward and backward, then the A/B timings.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call2.tar.xz F
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
scripts/gpu-sanitize.sh /tmp/t/F gt-email-Enron 'agnn 4 64' 'agnn 3 33' 'agnn 1 7' > /dev/null
TOOLS="memcheck racecheck" scripts/gpu-sanitize.sh /tmp/t/F mol-256 'agnn 1 128' 'agnn 2 100' > /dev/null
cat /tmp/o/sanitizer.txt
echo "sanitizer done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 540 - ($(date +%s) - start) )) 'F=/tmp/t/F' 'B=/tmp/t/B' 'K1=/tmp/t/K1' 'K2=/tmp/t/K2' > /tmp/o/ab.txt <<'CASES'
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
agnn er-1M-d16 4 64
agnn er-1M-d16 1 128
agnn pl-1M-d16 4 64
agnn mol-16384 1 128
agnn batch-1024x120-d50 1 128
agnn gt-cond-mat-2005 4 64
agnn gt-as-22july06 4 64
agnn cora 4 32
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
tar -cJf $OUT/call2-out.tar.xz -C /tmp/o .
