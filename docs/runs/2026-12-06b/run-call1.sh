#!/usr/bin/env bash
# Call 1 (twenty-third session): every GPU test and the main job on H (HEAD `a068c00`: the
# twenty-second session's planner, GAT's backward unfused under `auto` on large graphs of short
# rows); on an H200, H on the issues' target cases (`auto`) and `auto` against
# `--unfused-backward false` where the rule (measured on an H100) holds or nearly holds; on any
# GPU, the split plan's sensitivity on the small real graphs whose forward misses its target
# (AGNN as-22july06, AGNN Cora): forced split thresholds and chunk sizes on H, and M (H with
# `--max-chunks`: a split row's chunks lengthened so that it has at most that many) uncapped
# (as H) and capped at 8, 16 and 32 chunks per row.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call1.tar.xz H
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
split() {
scripts/ab.sh -b $(( 520 - ($(date +%s) - start) )) 'A=/tmp/t/H' 'c32=/tmp/t/H --chunk-edges 32' \
  'c64=/tmp/t/H --chunk-edges 64' 't64c32=/tmp/t/H --split-threshold 64 --chunk-edges 32' \
  't128c32=/tmp/t/H --split-threshold 128 --chunk-edges 32' 'M=/tmp/t/M' 'M8=/tmp/t/M --max-chunks 8' \
  'M16=/tmp/t/M --max-chunks 16' 'M32=/tmp/t/M --max-chunks 32' > $OUT/split.txt <<'CASES'
agnn gt-as-22july06 4 64
gt gt-as-22july06 4 64
agnn cora 4 32
gt cora 4 32
agnn gt-email-Enron 4 64
agnn gt-pgp-strong-2009 4 64
gat gt-as-22july06 4 64
CASES
}
grep -q H200 /tmp/o/device.txt || { echo "not an H200: no targets"; split; echo "done at $(($(date +%s) - start)) s"; exit 0; }
scripts/ab.sh -b $(( 200 - ($(date +%s) - start) )) 'H=/tmp/t/H' > $OUT/targets.txt <<'CASES'
gt gt-email-Enron 4 64
gt gt-as-22july06 4 64
gt gt-pgp-strong-2009 4 64
gt cora 4 32
gt er-1M-d16 4 64
gt pl-1M-d16 4 64
gt er-1M-d16 1 128
gt batch-1024x120-d50 1 128
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
agnn er-1M-d16 4 64
agnn pl-1M-d16 4 64
agnn er-1M-d16 1 128
agnn batch-1024x120-d50 1 128
gat er-1M-d16 4 64
gat pl-1M-d16 4 64
gat er-1M-d16 1 128
gat batch-1024x120-d50 1 128
gat gt-email-Enron 4 64
gat gt-as-22july06 4 64
gat gt-pgp-strong-2009 4 64
gat cora 4 32
CASES
echo "== targets done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 290 - ($(date +%s) - start) )) 'A=/tmp/t/H' 'F=/tmp/t/H --unfused-backward false' > $OUT/gat-backward.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 4 64
gat mol-16384 8 32
gat er-1M-d2 1 128
gat er-1M-d2 4 64
gat mol-64K 1 128
gat er-256K-d2 1 128
CASES
echo "== gat backward done at $(($(date +%s) - start)) s"
split
echo "done at $(($(date +%s) - start)) s"
