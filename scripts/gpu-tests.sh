#!/usr/bin/env bash
# Every GPU test, from prebuilt test binaries, so that the GPU machine needs no Rust toolchain.
#
#   scripts/gpu-tests.sh build [DIR]            on a machine with Rust: builds (release) the test
#                                               binaries that hold GPU tests, copies them to DIR
#                                               (default target/gpu-tests) and lists them
#   scripts/gpu-tests.sh run [DIR] [-- ARGS]    on the GPU machine (no Rust needed): runs
#                                               each binary of DIR with --ignored (and ARGS, e.g.
#                                               --test-threads=1); exits non-zero if any test failed
#
# GPU tests are `#[ignore = "needs a CUDA device: ..."]`, so a plain `cargo test` lists them as
# ignored; in the binaries below the ignored tests are exactly the GPU tests, and `--ignored` runs
# them. Without a usable device they fail: they never pass without having run.
set -euo pipefail
cd "$(dirname "$0")/.."

# The test targets that hold GPU tests (by target name, in whichever package has them).
targets=(attention gat gatv2 sum cusparse gpu chain)

mode=${1:-}
[[ $# -gt 0 ]] && shift
dir=target/gpu-tests
if [[ $# -gt 0 && $1 != -- ]]; then
  dir=$1
  shift
fi
[[ ${1:-} == -- ]] && shift
case "$mode" in
build)
  args=()
  for t in "${targets[@]}"; do args+=(--test "$t"); done
  json=$(cargo test --workspace --release --no-run --message-format=json "${args[@]}")
  mapfile -t built < <(grep '"kind":\["test"\]' <<<"$json" | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
  [[ ${#built[@]} -gt 0 ]] || { echo "gpu-tests: cargo built no test binaries" >&2; exit 1; }
  rm -rf "$dir"
  mkdir -p "$dir"
  for exe in "${built[@]}"; do
    name=$(basename "$exe")
    cp "$exe" "$dir/${name%-*}"
    echo "$exe -> $dir/${name%-*}"
  done
  ;;
run)
  [[ -d $dir ]] || { echo "gpu-tests: no $dir (run \`scripts/gpu-tests.sh build\` on a machine with Rust)" >&2; exit 1; }
  failed=()
  for exe in "$dir"/*; do
    echo "== $(basename "$exe")"
    "$exe" --ignored "$@" || failed+=("$(basename "$exe")")
  done
  if [[ ${#failed[@]} -gt 0 ]]; then
    echo "gpu-tests: failed: ${failed[*]}" >&2
    exit 1
  fi
  echo "gpu-tests: every GPU test passed"
  ;;
*)
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
