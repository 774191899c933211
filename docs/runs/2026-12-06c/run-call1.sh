#!/usr/bin/env bash
# Call 1 (twenty-fourth session; the twenty-third's call 4, which could not start): R2 (R with `RESIDENT_WARPS_PER_SM` 21: the split threshold
# halves on pgp-strong-2009, gt-cond-mat-2005 and pl-1M-d3) against R (`2f03c51`: chunks of at
# least 32 edges) on those graphs; on an H200 first, R2 on the issues' target cases and GAT's
# unfused backward (`auto` against `--unfused-backward false`); then every GPU test and the main
# job on R2's build.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/call1.tar.xz -C /tmp/t R R2
if grep -q H200 /tmp/o/device.txt; then
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
scripts/ab.sh -b 100 'R2=/tmp/t/R2' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 130 - ($(date +%s) - start) )) 'A=/tmp/t/R2' 'F=/tmp/t/R2 --unfused-backward false' > $OUT/gat-backward.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 4 64
gat mol-16384 8 32
gat er-1M-d2 1 128
CASES
echo "== gat backward done at $(($(date +%s) - start)) s"
fi
scripts/ab.sh -b $(( 200 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'R2=/tmp/t/R2' > $OUT/ab.txt <<'CASES'
gt gt-pgp-strong-2009 4 64
agnn gt-pgp-strong-2009 4 64
gat gt-pgp-strong-2009 4 64
gatv2 gt-pgp-strong-2009 4 64
gt gt-cond-mat-2005 4 64
agnn gt-cond-mat-2005 4 64
gat gt-cond-mat-2005 4 64
gatv2 gt-cond-mat-2005 4 64
gt pl-1M-d3 4 64
agnn pl-1M-d3 4 64
gat pl-1M-d3 4 64
gatv2 pl-1M-d3 4 64
gt pl-1M-d3 1 128
gat pl-1M-d3 1 128
gt gt-pgp-strong-2009 1 128
gat gt-cond-mat-2005 1 128
CASES
echo "== A/B done at $(($(date +%s) - start)) s"
scripts/gpu-call.sh .gpu/call1.tar.xz R2
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "done at $(($(date +%s) - start)) s"
