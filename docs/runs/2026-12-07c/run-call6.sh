#!/usr/bin/env bash
# Call 6 (thirty-second session): the per-(node, head) kernels' layout (GAT's node scores, AGNN's
# normalisation, GAT's row pass from the part: `kernels/common/node_rows.rs`), R (`309edb4`)
# against S1 (R with at most 8 lanes a row, `MAX_LANES`: F = 128 takes 8 lanes and four rows side
# by side instead of 32 lanes and one) and S2 (R with `gat_node_scores_w4` capped at 64 registers
# in device/register-caps.txt: 144 bytes spilled, four blocks a multiprocessor instead of three),
# two rounds in opposite orders. The archive `.gpu/calls.tar.xz`: each built with `cargo build
# --release -p dfgnn-cli` after `device/build-ptx.sh`, `tar -cf - R S1 S2 | xz -6`.
# Carry: .gpu/calls.tar.xz, .gpu/graph-tool, .gpu/planetoid.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/calls.tar.xz -C /tmp/t
cat > /tmp/o/cases <<'CASES'
gat batch-1024x120-d50 1 128
gat er-1M-d16 4 64
gat er-1M-d16 1 128
gat pl-1M-d16 4 64
gat gt-email-Enron 4 64
gat cora 4 32
gat mol-16384 1 128
agnn er-1M-d16 4 64
agnn er-1M-d16 1 128
agnn gt-as-22july06 4 64
agnn batch-1024x120-d50 1 128
CASES
scripts/ab.sh -b $(( 170 - ($(date +%s) - start) )) 'R=/tmp/t/R' 'S1=/tmp/t/S1' 'S2=/tmp/t/S2' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
scripts/ab.sh -b $(( 300 - ($(date +%s) - start) )) 'S2=/tmp/t/S2' 'S1=/tmp/t/S1' 'R=/tmp/t/R' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
