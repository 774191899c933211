#!/usr/bin/env bash
# Call 3: GATv2's GPU tests at c9d549c (its backward caps), then the whole report
# (scripts/bench-suite.sh report), packed into $OUT.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/t && tar -xJf .gpu/call3.tar.xz -C /tmp/t
mkdir -p target/release target/python-wheels .whl
cp /tmp/t/dfgnn target/release/dfgnn; cp /tmp/t/python-wheels/*.whl target/python-wheels/; cp /tmp/t/turbo_gnn-*.whl .whl/
date -u > $OUT/gpu-tests.txt
timeout 60 /tmp/t/gatv2 --ignored >> $OUT/gpu-tests.txt 2>&1; echo "gatv2 rc=$?" >> $OUT/gpu-tests.txt
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data PACK_DIR=$OUT BUDGET_S=${BUDGET_S:-500}
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1; echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
