#!/usr/bin/env bash
# The whole report at a99f0ed (scripts/bench-suite.sh report), packed into $OUT.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export DFGNN_GRAPH_TOOL_DIR=.gpu/data/graph-tool DFGNN_DATA_DIR=.gpu/data PACK_DIR=$OUT BUDGET_S=520
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1; echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
