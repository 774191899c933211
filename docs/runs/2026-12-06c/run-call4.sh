#!/usr/bin/env bash
# Call 4 (twenty-fourth session): B4, call 3's B3 with the second merge level computed after the
# first (not carried through it) and one merge per level in the code (B3 spilled more in the
# capped forwards than B), against R (HEAD's plan) and B (call 2: one merge level) in the same
# call; first every GPU test and the main job on B4's build; on an H200 also B4 on the issues'
# target cases.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call4.tar.xz B4
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
scripts/ab.sh -b 100 'B4=/tmp/t/B4' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
fi
cat > /tmp/o/cases <<'CASES'
gt gt-as-22july06 4 64
agnn gt-as-22july06 4 64
gat gt-as-22july06 4 64
gatv2 gt-as-22july06 4 64
agnn gt-as-22july06 1 128
gt pl-64K-d16 4 64
gat pl-64K-d16 4 64
gt gt-email-Enron 4 64
gat gt-email-Enron 4 64
agnn gt-pgp-strong-2009 4 64
gat gt-pgp-strong-2009 4 64
agnn cora 4 32
gat cora 4 32
gt pl-1M-d16 4 64
gat pl-1M-d16 4 64
gt pl-1M-d3 4 64
CASES
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'B=/tmp/t/B' 'B4=/tmp/t/B4' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) 'B4=/tmp/t/B4' 'B=/tmp/t/B' 'R=/tmp/t/R' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
