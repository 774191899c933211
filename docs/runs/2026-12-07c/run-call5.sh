#!/usr/bin/env bash
# Call 5 (thirty-second session): every target case of issues 8 and 10
# (scripts/target-cases.txt) with R (`309edb4`), one round, for where each stands on this card
# (the targets are judged on an H200). The archive `.gpu/callt.tar.xz`: R alone (call 3's
# build), `tar -cf - R | xz -6`.
# Carry: .gpu/callt.tar.xz, .gpu/graph-tool, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callt.tar.xz -C /tmp/t
scripts/ab.sh -b $(( ${BUDGET_S:-330} - ($(date +%s) - start) )) 'R=/tmp/t/R' < scripts/target-cases.txt > $OUT/targets.txt 2>&1
echo "done at $(($(date +%s) - start)) s"
