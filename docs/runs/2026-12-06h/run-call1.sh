#!/usr/bin/env bash
# Call 1 (twenty-ninth session): the TF32 probe (`tf32-probe.cu`: the dense tiles' two products
# in FP32 multiply-adds against split-TF32 tensor-core products, on the batch's shapes), then the
# twenty-eighth session's call as it was written (`docs/runs/2026-12-06g/run-call1.sh`: every GPU
# test on branch `s28`'s `cf24a45`, then F, G and D side by side), with the same carry.
mkdir -p /tmp/o
nvcc -O3 -arch=sm_90 -o /tmp/probe docs/runs/2026-12-06h/tf32-probe.cu > $OUT/probe.txt 2>&1 &&
  /tmp/probe >> $OUT/probe.txt 2>&1
echo "probe rc=$? at ${SECONDS} s"
bash docs/runs/2026-12-06g/run-call1.sh
