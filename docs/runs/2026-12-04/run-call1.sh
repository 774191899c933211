#!/usr/bin/env bash
# Call 1 (fifteenth session): AGNN's forward with keys made from the gathered values and the
# inverse norms (one vector per edge, `hn` not stored; F) against `05d9326` (B), and F with the
# forward of the default layout (agnn_fwd_w4_s1, 80 registers) capped at 64 (C64) and 56 (C56).
# The GPU tests (with the new bit-for-bit test against GT on the normalised features) and the
# main job on F, compute-sanitizer over AGNN's forwards (auto, row_group), then the A/B timings.
start=$(date +%s)
scripts/gpu-call.sh .gpu/call1.tar.xz F
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data
scripts/gpu-sanitize.sh /tmp/t/F gt-email-Enron 'agnn 4 64' 'agnn 3 33' 'agnn 1 7' 'agnn 2 100' > /dev/null
for c in "4 64" "3 33"; do
  set -- $c
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/t/F --backend cuda bench agnn --graph gt-as-22july06 --heads $1 --feat $2 --schedule row_group --warmup 0 --repeats 1 --input-sets 1 > /tmp/o/sanitizer-group-$tool-$1x$2.txt 2>&1
    echo "compute-sanitizer $tool agnn row_group $1x$2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/o/sanitizer-group-$tool-$1x$2.txt | tr '\n' ' ')" >> /tmp/o/sanitizer.txt
  done
done
cat /tmp/o/sanitizer.txt
echo "sanitizer done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'new=/tmp/t/F' 'base=/tmp/t/B' 'c64=/tmp/t/C64' 'c56=/tmp/t/C56' > /tmp/o/ab.txt <<'CASES'
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
agnn er-1M-d16 4 64
agnn er-1M-d16 1 128
agnn gt-cond-mat-2005 4 64
gt gt-email-Enron 4 64
agnn pl-1M-d16 4 64
agnn mol-16384 1 128
gt er-1M-d16 4 64
agnn batch-1024x120-d50 1 128
gt gt-as-22july06 4 64
CASES
cat /tmp/o/ab.txt
echo "done at $(($(date +%s) - start)) s"
tar -cJf $OUT/call1-out.tar.xz -C /tmp/o .
