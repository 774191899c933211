#!/usr/bin/env bash
# Call 6 (twenty-fourth session): HEAD `be07612` (built as call 5's B52: the forward's in-kernel
# merge and 21 resident warps per SM) against R (`cf33399`'s plan) on the issues' target cases;
# on an H200, first HEAD alone on them (the targets judged).
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/call6.tar.xz -C /tmp/t R B52
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b 110 'HEAD=/tmp/t/B52' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
fi
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'HEAD=/tmp/t/B52' < /tmp/o/targets.cases > $OUT/ab.txt
echo "done at $(($(date +%s) - start)) s"
