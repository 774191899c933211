#!/usr/bin/env bash
# Call 2 (twenty-fourth session): B, the forward's split rows merged by the last chunk of each
# row to finish (no combine launch), against R (HEAD `cf33399`'s plan, built at `2f03c51`), and
# B2 (B with `RESIDENT_WARPS_PER_SM` 21), on every graph whose forward splits rows; first every
# GPU test and the main job on B's build; on an H200 also B on the issues' target cases.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call2.tar.xz B
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
scripts/ab.sh -b 100 'B=/tmp/t/B' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
fi
cat > /tmp/o/cases <<'CASES'
gt gt-as-22july06 4 64
agnn gt-as-22july06 4 64
gat gt-as-22july06 4 64
gatv2 gt-as-22july06 4 64
gt gt-as-22july06 1 128
agnn gt-as-22july06 1 128
gat gt-as-22july06 1 128
gt cora 4 32
agnn cora 4 32
gat cora 4 32
gatv2 cora 4 32
gt gt-email-Enron 4 64
agnn gt-email-Enron 4 64
gat gt-email-Enron 4 64
gatv2 gt-email-Enron 4 64
gt gt-pgp-strong-2009 4 64
agnn gt-pgp-strong-2009 4 64
gat gt-pgp-strong-2009 4 64
gt gt-cond-mat-2005 4 64
agnn gt-cond-mat-2005 4 64
gt gt-astro-ph 4 64
gat gt-astro-ph 4 64
gt citeseer 4 64
agnn citeseer 4 64
gt pl-1M-d3 4 64
gat pl-1M-d3 4 64
gt pl-1M-d16 4 64
gat pl-1M-d16 4 64
gt pl-64K-d16 4 64
CASES
scripts/ab.sh -b $(( 330 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'B=/tmp/t/B' 'B2=/tmp/t/B2' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'B2=/tmp/t/B2' 'B=/tmp/t/B' 'R=/tmp/t/R' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
