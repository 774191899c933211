#!/usr/bin/env bash
# Call 5 (fifteenth session, at `020650a`): the whole report
# (scripts/bench-suite.sh report), with turbo-gnn's wheel built in call 4 from its PyPI sdist,
# packed into $OUT.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/t && tar -xJf .gpu/call5.tar.xz -C /tmp/t
mkdir -p target/release target/python-wheels .whl
cp /tmp/t/dfgnn target/release/dfgnn; cp -r /tmp/t/python-wheels/* target/python-wheels/; cp /tmp/t/turbo_gnn-*.whl .whl/
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data PACK_DIR=$OUT BUDGET_S=${BUDGET_S:-540}
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1; echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
