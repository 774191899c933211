#!/usr/bin/env bash
# Call 3 (twenty-third session): R (the planner with chunks of at least 32 edges where the split
# threshold allows, `plan::chunk_edges`) against H (HEAD `a068c00`) on the graphs whose plan it
# changes: as-22july06 (threshold 32) and astro-ph (64), every model, 4x64 and 1x128, two rounds.
# On an H200 first: R on the issues' target cases, and GAT's unfused backward on R (`auto`
# against `--unfused-backward false`).
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/call3.tar.xz -C /tmp/t
if grep -q H200 /tmp/o/device.txt; then
sed -n '/^gt gt-email-Enron 4 64$/,/^gat cora 4 32$/p' docs/runs/2026-12-06b/run-call2.sh > /tmp/o/targets.cases
scripts/ab.sh -b 110 'R=/tmp/t/R' < /tmp/o/targets.cases > $OUT/targets.txt
echo "== targets done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 150 - ($(date +%s) - start) )) 'A=/tmp/t/R' 'F=/tmp/t/R --unfused-backward false' > $OUT/gat-backward.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 4 64
gat mol-16384 8 32
gat er-1M-d2 1 128
CASES
echo "== gat backward done at $(($(date +%s) - start)) s"
fi
for round in 1 2; do
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'H=/tmp/t/H' 'R=/tmp/t/R' > $OUT/ab-$round.txt <<'CASES'
gt gt-as-22july06 4 64
agnn gt-as-22july06 4 64
gat gt-as-22july06 4 64
gatv2 gt-as-22july06 4 64
gt gt-astro-ph 4 64
agnn gt-astro-ph 4 64
gat gt-astro-ph 4 64
gatv2 gt-astro-ph 4 64
gt gt-as-22july06 1 128
agnn gt-as-22july06 1 128
gat gt-as-22july06 1 128
gatv2 gt-as-22july06 1 128
gt gt-astro-ph 1 128
agnn gt-astro-ph 1 128
gat gt-astro-ph 1 128
gatv2 gt-astro-ph 1 128
CASES
done
echo "done at $(($(date +%s) - start)) s"
