#!/usr/bin/env bash
# Fuzzes every dfgnn-graphs reader (.npz, .npy, Matrix Market, edge lists, .gt, .gt.gz, SMILES)
# and graph preparation for a bounded time on stable Rust, under a memory limit.
#
#   scripts/fuzz-ci.sh [SECONDS_PER_TARGET]      (default 20: 8 targets, 2 at a time, under 2 minutes)
#
# The driver is the `fuzz-graphs` binary of the `fuzz/` crate (see fuzz/README.md), one process
# per target, DFGNN_FUZZ_JOBS (default 2) at a time, all from one seed. Its targets read within
# a 256 MiB budget; `ulimit -v` (4 GiB of address space per process) turns any allocation past
# that into an abort, which fails the run like a panic, a hang (10 s) or a failed check does.
# Findings are saved under $DFGNN_FUZZ_ARTIFACTS (default /tmp/dfgnn-fuzz-artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
jobs=${DFGNN_FUZZ_JOBS:-2}
seed=${DFGNN_FUZZ_SEED:-$(date +%s)}
artifacts=${DFGNN_FUZZ_ARTIFACTS:-/tmp/dfgnn-fuzz-artifacts}
cargo build --quiet -p dfgnn-graphs-fuzz
bin=target/debug/fuzz-graphs
mapfile -t targets < <("$bin" list)
((${#targets[@]} > 0)) || { echo "fuzz-ci: $bin list named no targets" >&2; exit 1; }
echo "fuzzing ${#targets[@]} targets for $seconds s each, $jobs at a time, seed $seed"

# One target in a process of its own, under the memory limit.
fuzz_one() {
  ulimit -v 4194304
  exec timeout $((seconds + 60)) "$bin" "$1" --seconds "$seconds" --seed "$seed" --artifacts "$artifacts"
}

status=0
running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || status=$?
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || status=$?
  running=$((running - 1))
done
if [ "$status" -ne 0 ]; then
  echo "fuzzing failed (exit $status): panics and hangs are saved in $artifacts (replay: $bin replay <target> FILE)." >&2
  echo "An abort (134) is not saved, but the mutants are a pure function of the seed: $bin <target> --seed <seed above>" >&2
  echo "reproduces it, and --execs N stops after N inputs to bisect." >&2
fi
exit "$status"
