#!/usr/bin/env bash
# Call 2 (twenty-third session): the split plan's chunk size and threshold, on H (HEAD `a068c00`)
# with forced options, on every real graph and generated family whose plan either rule changes.
# Call 1 (H100) found chunks of 32 edges faster than 16 on as-22july06 (threshold 32) and a
# threshold of 64 faster than 128 on email-Enron and pgp-strong-2009. Per graph: `auto` (A);
# R, chunks of max(threshold / 4, 32) but at most the threshold; TR, R at half the threshold.
# On an H200 first the issues' target cases on H and GAT's unfused backward (`auto` against
# `--unfused-backward false`).
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/call1.tar.xz -C /tmp/t H
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b 110 'H=/tmp/t/H' > $OUT/targets.txt <<'CASES'
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
scripts/ab.sh -b $(( 160 - ($(date +%s) - start) )) 'A=/tmp/t/H' 'F=/tmp/t/H --unfused-backward false' > $OUT/gat-backward.txt <<'CASES'
gat mol-16384 1 128
gat mol-16384 4 64
gat mol-16384 8 32
gat er-1M-d2 1 128
gat er-1M-d2 4 64
CASES
echo "== gat backward done at $(($(date +%s) - start)) s"
fi
cases() {
  for shape in "4 64" "1 128"; do
    while read -r graph rest; do
      [[ $shape == "1 128" && $graph != gt-as-22july06 && $graph != gt-astro-ph && $graph != gt-email-Enron ]] && continue
      for model in gt agnn gat gatv2; do
        echo "$model $graph $shape"
        IFS=';' read -r -a forced <<<"$rest"
        for f in "${forced[@]}"; do echo "$model $graph $shape $f"; done
      done
    done <<'GRAPHS'
gt-as-22july06 --split-threshold 32 --chunk-edges 32;--split-threshold 16 --chunk-edges 16
gt-astro-ph --split-threshold 64 --chunk-edges 32;--split-threshold 32 --chunk-edges 32
gt-email-Enron --split-threshold 64 --chunk-edges 32
gt-pgp-strong-2009 --split-threshold 64 --chunk-edges 32
gt-cond-mat-2005 --split-threshold 64 --chunk-edges 32
pl-64K-d16 --split-threshold 128 --chunk-edges 32
pl-256K-d16 --split-threshold 512 --chunk-edges 128
GRAPHS
  done
}
cases > $OUT/cases.txt
scripts/ab.sh -b $(( 480 - ($(date +%s) - start) )) 'H=/tmp/t/H' < $OUT/cases.txt > $OUT/split.txt
echo "done at $(($(date +%s) - start)) s"
