#!/usr/bin/env bash
# Call 4 (twenty-sixth session; call 3, the same on `05c50a4` alone, found no machine): B, the
# dense tile forward and the closed-block backward staging their chunks with cp.async (the next
# chunk copied while the block computes on the current one; the dense forward's shared memory
# sized by the widest tile), and the per-edge tile forwards and GAT's column tiles with all of a
# thread's copies in flight at once, against K (`06bc6e7`); first every GPU test and the main job
# on B's build; on an H200 also the issues' target cases on B.
start=$(date +%s)
export DFGNN_GRAPH_TOOL_DIR=.gpu/gt3
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
scripts/gpu-call.sh .gpu/call4.tar.xz B
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
echo "== tests done at $(($(date +%s) - start)) s"
cat > /tmp/o/cases <<'CASES'
gt batch-1024x120-d50 1 128
gt batch-1024x120-d50 4 64
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gat batch-1024x120-d50 4 64
gatv2 batch-1024x120-d50 1 128
gt batch-512x200-d60 1 128 --tiles dense
gt batch-1024x120-d20 1 128 --tiles dense
gt mol-16384 1 128 --tiles dense
gat mol-16384 1 128 --tiles edges
gt batch-4096x30-d10 4 64
CASES
scripts/ab.sh -b $(( 250 - ($(date +%s) - start) )) 'K=/tmp/t/K' 'B=/tmp/t/B' < /tmp/o/cases > $OUT/ab1.txt
echo "== round 1 done at $(($(date +%s) - start)) s"
if grep -q H200 /tmp/o/device.txt; then
scripts/ab.sh -b $(( 480 - ($(date +%s) - start) )) 'B=/tmp/t/B' > $OUT/targets.txt <<'TARGETS'
gt batch-1024x120-d50 1 128
agnn batch-1024x120-d50 1 128
gat batch-1024x120-d50 1 128
gt gt-email-Enron 4 64
gt gt-as-22july06 4 64
gt gt-pgp-strong-2009 4 64
gt cora 4 32
agnn gt-email-Enron 4 64
agnn gt-as-22july06 4 64
agnn gt-pgp-strong-2009 4 64
agnn cora 4 32
gat gt-email-Enron 4 64
gat gt-as-22july06 4 64
gat gt-pgp-strong-2009 4 64
gat cora 4 32
gt er-1M-d16 4 64
gt pl-1M-d16 4 64
gt er-1M-d16 1 128
agnn er-1M-d16 4 64
agnn pl-1M-d16 4 64
agnn er-1M-d16 1 128
gat er-1M-d16 4 64
gat pl-1M-d16 4 64
gat er-1M-d16 1 128
TARGETS
echo "== targets done at $(($(date +%s) - start)) s"
fi
scripts/ab.sh -b $(( 560 - ($(date +%s) - start) )) 'B=/tmp/t/B' 'K=/tmp/t/K' < /tmp/o/cases > $OUT/ab2.txt
echo "done at $(($(date +%s) - start)) s"
