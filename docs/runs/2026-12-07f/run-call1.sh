#!/usr/bin/env bash
# Call 1 (thirty-fifth session). On an H200 with turbo-gnn's wheel carried: the report's generated
# graphs on HEAD's device code (`docs/runs/2026-12-07d/run-call3.sh`). Otherwise:
# `docs/runs/2026-12-07e/run-call4.sh` (GPU tests on Q1, N against Q1 and Q3, ncu of Q1 and N).
# Carry: .gpu/callq1.tar.xz (repacked with its binaries stripped: 6 MB, was 20), .gpu/callq3.tar.xz,
# .gpu/callr.tar.xz, .gpu/planetoid, .whl.
if grep -q H200 <(nvidia-smi -L) && [ -d .whl ]; then
  bash docs/runs/2026-12-07d/run-call3.sh
else
  bash docs/runs/2026-12-07e/run-call4.sh
fi
