#!/usr/bin/env bash
# The benchmark cases of the GT issue (docs/results.md), on the GPU: `dfgnn bench gt` per case.
#   scripts/bench-suite.sh [DFGNN_BINARY]      (default: target/release/dfgnn, from `cargo build --release -p dfgnn-cli`)
set -euo pipefail
dfgnn=${1:-target/release/dfgnn}
all=auto,row_tiled,row_split,row_group,edge_parallel,unfused
"$dfgnn" bench gt --graph er-1M-d16 --heads 4 --feat 64 --schedule "$all"
"$dfgnn" bench gt --graph pl-1M-d16 --heads 4 --feat 64 --schedule "$all"
"$dfgnn" bench gt --graph er-1M-d16 --heads 1 --feat 128 --schedule auto,row_tiled,row_group,edge_parallel,unfused
"$dfgnn" bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule "$all"
"$dfgnn" bench gt --graph batch-1024x120-d50 --heads 4 --feat 64 --schedule auto,row_tiled
