#!/usr/bin/env bash
# Call 2 (thirtieth session): the report's generated graphs (batch-1024x120-d50, mol-16384,
# er-1M-d16, pl-1M-d16) on `main` at `df57587` (binary and Python wheel in `.gpu/callr.tar.xz`:
# `cargo build --release -p dfgnn-cli` and `maturin build --release --zig --compatibility
# manylinux_2_28 --manifest-path python/Cargo.toml`), with the peers on the same graph files
# (turbo-gnn's wheel from call 1 in `.whl/`). `scripts/bench-suite.sh report` with Cora alone as
# the real graphs (its part is not adopted: the committed real graphs' part stays).
# Carry: .gpu/callr.tar.xz, .gpu/planetoid, .whl.
. scripts/gpu-env.sh
tar -xJf .gpu/callr.tar.xz -C /tmp/t
mkdir -p target/release target/python-wheels
cp /tmp/t/M target/release/dfgnn
cp /tmp/t/dfgnn-*.whl target/python-wheels/
cp /tmp/o/device.txt $OUT/
export PACK_DIR=$OUT BUDGET_S=560 REAL_GRAPHS=cora REAL_SHAPES=4x32
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1
echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
