#!/usr/bin/env bash
# Call 3 (thirty-third session), for an H200: the report's generated graphs (batch-1024x120-d50,
# mol-16384, er-1M-d16, pl-1M-d16) on Y (`4389ecc`, whose device code is call 2's Y) with the
# peers on the same graph files, as `docs/runs/2026-12-07b/run-call2.sh` runs them (Cora alone as
# the real graphs: that part is not adopted). The archive `.gpu/callr.tar.xz`: `cargo build
# --release -p dfgnn-cli` and `maturin build --release --zig --compatibility manylinux_2_28
# --manifest-path python/Cargo.toml` at Y, packed with `tar -cf - N dfgnn-*.whl | xz -6` (the
# binary named N); turbo-gnn's wheel (built on the GPU machine in
# `docs/runs/2026-12-07b/run-call1.sh`) in `.whl/`.
# On any other GPU (the report's figures are the H200's), instead: ncu on Y, GT
# batch-1024x120-d50 1×128, the dense tile forward (stall reasons, instruction mix, SASS source
# page).
# Carry: .gpu/callr.tar.xz, .gpu/planetoid, .whl.
start=$(date +%s)
. scripts/gpu-env.sh
cp /tmp/o/device.txt $OUT/
tar -xJf .gpu/callr.tar.xz -C /tmp/t
if ! grep -q H200 /tmp/o/device.txt; then
  k=gt_tiles_fwd_w4
  timeout 150 ncu --clock-control none --import-source no --kernel-name $k -c 1 --set full \
    --section SourceCounters \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    -o /tmp/o/$k /tmp/t/N bench gt --graph batch-1024x120-d50 --heads 1 --feat 128 --schedule auto \
    --warmup 0 --repeats 1 --input-sets 1 > $OUT/ncu-$k.log 2>&1
  ncu -i /tmp/o/$k.ncu-rep --print-details all > $OUT/ncu-$k.txt 2>&1
  ncu -i /tmp/o/$k.ncu-rep --page source --csv --print-source sass | gzip > $OUT/sass-$k.csv.gz
  echo "not an H200: ncu of $k done at $(($(date +%s) - start)) s"
  exit 0
fi
mkdir -p target/release target/python-wheels
cp /tmp/t/N target/release/dfgnn
cp /tmp/t/dfgnn-*.whl target/python-wheels/
export PACK_DIR=$OUT BUDGET_S=$(( ${BUDGET_S:-585} - ($(date +%s) - start) )) REAL_GRAPHS=cora REAL_SHAPES=4x32
date -u > $OUT/report-log.txt
scripts/bench-suite.sh report /tmp/report >> $OUT/report-log.txt 2>&1
echo "report rc=$?" >> $OUT/report-log.txt
date -u >> $OUT/report-log.txt
echo "done at $(($(date +%s) - start)) s"
