#!/usr/bin/env bash
# Call 3 (twentieth session; call 2 as written was taken back three times before it finished):
# the GPU tests and the main job on R (`24870ce` merged with `part-tolerance`), then one short
# A/B round of H (`9391f88`, main's device code before this session) and R.
start=$(date +%s)
. scripts/gpu-env.sh
scripts/gpu-call.sh .gpu/call11.tar.xz R
echo "== gpu-call done at $(($(date +%s) - start)) s"
cp /tmp/o/*.txt $OUT/
scripts/ab.sh -b $(( 110 - ($(date +%s) - start) )) 'H=/tmp/t/H' 'R=/tmp/t/R' >> /tmp/o/ab.txt <<'CASES'
gat mol-16384 1 128
gt mol-16384 1 128
gt er-1M-d16 1 128
gat er-1M-d16 1 128
gt gt-email-Enron 8 32
gatv2 er-1M-d16 4 64
agnn er-1M-d16 1 128
gt gt-as-22july06 4 64
gat mol-16384 1 128
gt mol-16384 1 128
gt er-1M-d16 1 128
CASES
cp /tmp/o/*.txt $OUT/
echo "done at $(($(date +%s) - start)) s"
