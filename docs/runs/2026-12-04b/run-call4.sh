#!/usr/bin/env bash
# Call 4 (sixteenth session): the final build (GATv2's column pass writing d xl as one sum, its
# forward capped at 64 registers): every GPU test and the main job, then the whole report
# (scripts/bench-suite.sh report) with turbo-gnn's wheel of the fifteenth session (built on the
# GPU machine from its PyPI sdist), packed into $OUT.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
scripts/gpu-call.sh .gpu/call4.tar.xz dfgnn
cp /tmp/o/gpu-tests.txt /tmp/o/main-job.txt $OUT/
mkdir -p target/release target/python-wheels .whl
cp /tmp/t/dfgnn target/release/dfgnn; cp -r /tmp/t/python-wheels/* target/python-wheels/; cp /tmp/t/turbo_gnn-*.whl .whl/
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data PACK_DIR=$OUT BUDGET_S=${BUDGET_S:-500}
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1; echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
