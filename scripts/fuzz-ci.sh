#!/usr/bin/env bash
# Fuzzes every dfgnn-graphs reader (.npz, .npy, Matrix Market, edge lists, .gt, .gt.gz, SMILES)
# and graph preparation for a bounded time on stable Rust, under a memory limit.
#
#   scripts/fuzz-ci.sh [SECONDS_PER_TARGET]      (default 20: 8 targets, under 3 minutes)
#
# The driver is the `fuzz-graphs` binary of the `fuzz/` crate (see fuzz/README.md). Its targets
# read within a 256 MiB budget; `ulimit -v` (4 GiB of address space) turns any allocation past
# that into an abort, which fails the run like a panic, a hang (10 s) or a failed check does.
# Findings are saved under $DFGNN_FUZZ_ARTIFACTS (default /tmp/dfgnn-fuzz-artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
artifacts=${DFGNN_FUZZ_ARTIFACTS:-/tmp/dfgnn-fuzz-artifacts}
cargo build --quiet -p dfgnn-graphs-fuzz
bin=target/debug/fuzz-graphs
status=0
(
  ulimit -v 4194304
  exec timeout $((seconds * 8 + 60)) "$bin" all --seconds "$seconds" --seed "${DFGNN_FUZZ_SEED:-$(date +%s)}" \
    --artifacts "$artifacts"
) || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzzing failed (exit $status): panics and hangs are saved in $artifacts (replay: $bin replay <target> FILE)." >&2
  echo "An abort (134) is not saved, but the mutants are a pure function of the seed: $bin <target> --seed <seed above>" >&2
  echo "reproduces it, and --execs N stops after N inputs to bisect." >&2
fi
exit "$status"
