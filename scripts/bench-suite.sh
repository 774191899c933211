#!/usr/bin/env bash
# The benchmark cases of the GT and GAT issues (docs/results.md), on the GPU: `dfgnn bench gt`,
# `dfgnn bench gat` and `dfgnn bench gatv2` per case.
#   scripts/bench-suite.sh [DFGNN_BINARY]      (default: target/release/dfgnn, from `cargo build --release -p dfgnn-cli`)
set -euo pipefail
dfgnn=${1:-target/release/dfgnn}
all=auto,row_tiled,row_split,row_group,edge_parallel,unfused
"$dfgnn" bench gt --graph er-1M-d16 --heads 4 --feat 64 --schedule "$all"
"$dfgnn" bench gt --graph pl-1M-d16 --heads 4 --feat 64 --schedule "$all"
"$dfgnn" bench gt --graph er-1M-d16 --heads 1 --feat 128 --schedule auto,row_tiled,row_group,edge_parallel,unfused
"$dfgnn" bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule "$all"
"$dfgnn" bench gt --graph batch-1024x120-d50 --heads 4 --feat 64 --schedule auto,row_tiled
gat=auto,row_tiled,row_split,unfused
"$dfgnn" bench gat --graph er-1M-d16 --heads 4 --feat 64 --schedule "$gat"
"$dfgnn" bench gat --graph pl-1M-d16 --heads 4 --feat 64 --schedule "$gat"
"$dfgnn" bench gat --graph er-1M-d16 --heads 1 --feat 128 --schedule "$gat"
"$dfgnn" bench gat --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule "$gat"
"$dfgnn" bench gatv2 --graph er-1M-d16 --heads 4 --feat 64 --schedule "$gat"
"$dfgnn" bench gatv2 --graph pl-1M-d16 --heads 4 --feat 64 --schedule "$gat"
"$dfgnn" bench gatv2 --graph er-1M-d16 --heads 1 --feat 128 --schedule "$gat"
"$dfgnn" bench gatv2 --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule "$gat"
