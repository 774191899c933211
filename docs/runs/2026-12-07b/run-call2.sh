#!/usr/bin/env bash
# Call 2 (thirty-first session): the report's generated graphs (batch-1024x120-d50, mol-16384,
# er-1M-d16, pl-1M-d16) on N (`977c9fd`; binary and Python wheel in `.gpu/callr.tar.xz`: `cargo
# build --release -p dfgnn-cli` and `maturin build --release --zig --compatibility manylinux_2_28
# --manifest-path python/Cargo.toml`, packed with `tar -cf - N dfgnn-*.whl | xz -6`), with the
# peers on the same graph files (turbo-gnn's wheel from call 1 in `.whl/`).
# `scripts/bench-suite.sh report` with Cora alone as the real graphs (that part is not adopted:
# the committed real graphs' part stays). BUDGET_S (default 560) for a shorter call.
# Carry: .gpu/callr.tar.xz, .gpu/planetoid, .whl.
. scripts/gpu-env.sh
tar -xJf .gpu/callr.tar.xz -C /tmp/t
mkdir -p target/release target/python-wheels
cp /tmp/t/N target/release/dfgnn
cp /tmp/t/dfgnn-*.whl target/python-wheels/
cp /tmp/o/device.txt $OUT/
export PACK_DIR=$OUT BUDGET_S=${BUDGET_S:-560} REAL_GRAPHS=cora REAL_SHAPES=4x32
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1
echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
