#!/usr/bin/env bash
# Call 3 (twenty-fourth session): B3, call 2's B with a split row of more than 8 chunks merged
# in two levels (each group of 8 chunks by its last to finish, then the groups by the last
# group), and with the merge's loads in flight independent of the part (B's GAT lost the bit
# identity of its forward with and without the part: the GPU tests caught it), against R (HEAD's
# plan) and B32 (B3 with `RESIDENT_WARPS_PER_SM` 21); first every GPU test and the main job
# on B3's build; on an H200 also B3 on the issues' target cases.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call3.tar.xz B3
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
scripts/ab.sh -b 100 'B3=/tmp/t/B3' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
fi
cat > /tmp/o/cases <<'CASES'
gt gt-as-22july06 4 64
agnn gt-as-22july06 4 64
gat gt-as-22july06 4 64
gatv2 gt-as-22july06 4 64
gt gt-as-22july06 1 128
agnn gt-as-22july06 1 128
gt pl-64K-d16 4 64
gt gt-email-Enron 4 64
agnn gt-pgp-strong-2009 4 64
gat gt-pgp-strong-2009 4 64
agnn gt-cond-mat-2005 4 64
agnn cora 4 32
gat cora 4 32
gt pl-1M-d16 4 64
gat pl-1M-d16 4 64
gt pl-1M-d3 4 64
gat pl-1M-d3 4 64
CASES
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'B3=/tmp/t/B3' 'B32=/tmp/t/B32' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 540 - ($(date +%s) - start) )) 'B32=/tmp/t/B32' 'B3=/tmp/t/B3' 'R=/tmp/t/R' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
