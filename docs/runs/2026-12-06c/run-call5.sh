#!/usr/bin/env bash
# Call 5 (twenty-fourth session): B52, call 4's B4 with two partials in flight per merge step
# (B4 spilled more than B in the capped forwards; at two, fewer than HEAD) and with
# `RESIDENT_WARPS_PER_SM` 21 (the twenty-third session's patch: the split threshold halves on
# pgp-strong-2009, cond-mat-2005 and pl-1M-d3 among the graphs measured), against R (HEAD's plan)
# and B4; first every GPU test and the main job on B52's build; on an H200 also B52 on the
# issues' target cases.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call5.tar.xz B52
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
scripts/ab.sh -b 100 'B52=/tmp/t/B52' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
fi
cat > /tmp/o/cases <<'CASES'
gt gt-as-22july06 4 64
agnn gt-as-22july06 4 64
gat gt-as-22july06 4 64
gatv2 gt-as-22july06 4 64
gt pl-64K-d16 4 64
gt gt-email-Enron 4 64
gt gt-pgp-strong-2009 4 64
agnn gt-pgp-strong-2009 4 64
gat gt-pgp-strong-2009 4 64
agnn cora 4 32
gt pl-1M-d16 4 64
gat pl-1M-d16 4 64
gt pl-1M-d3 4 64
gat pl-1M-d3 4 64
CASES
scripts/ab.sh -b $(( 240 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'B4=/tmp/t/B4' 'B52=/tmp/t/B52' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 380 - ($(date +%s) - start) )) 'B52=/tmp/t/B52' 'B4=/tmp/t/B4' 'R=/tmp/t/R' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
