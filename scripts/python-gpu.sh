#!/usr/bin/env bash
# The Python package on the GPU machine (no Rust, no network): its tests with the CUDA ones
# required, then the training examples, from a wheel built elsewhere.
#
#   scripts/python-gpu.sh build              on a machine with Rust and network: builds the wheel
#                                            and runs the CPU tests (scripts/python-tests.sh), then
#                                            puts pytest's wheels in target/python-wheels/deps;
#                                            carry target/python-wheels to the GPU machine
#   scripts/python-gpu.sh run CORA_NPZ OUT   on the GPU machine: DFGNN_REQUIRE_CUDA=1 pytest, the
#                                            Cora GAT example and the large-graph timings (er, pl),
#                                            each one's output and JSON under OUT; exits non-zero
#                                            if any failed
#   scripts/python-gpu.sh tests OUT          the tests alone (as in run)
#   scripts/python-gpu.sh moses DIR OUT      the MOSES training example (GT and GAT, dfgnn and PyG,
#                                            batches of 1024 and 8192 molecules; DIR holds
#                                            train.csv.gz and test.csv.gz, from
#                                            scripts/fetch-moses.sh), outputs and JSON under OUT
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
[[ $# -gt 0 ]] && shift
case "$mode" in
build)
  scripts/python-tests.sh -q
  venv=${DFGNN_PY_VENV:-$HOME/.cache/dfgnn/venv-py}
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    -d target/python-wheels/deps pytest
  ls target/python-wheels target/python-wheels/deps
  ;;
tests | run)
  [[ $mode == tests ]] && out=${1:?usage: scripts/python-gpu.sh tests OUT} || out=${2:?usage: scripts/python-gpu.sh run CORA_NPZ OUT}
  mkdir -p "$out"
  export DFGNN_PY_OFFLINE=1
  failed=()
  DFGNN_REQUIRE_CUDA=1 scripts/python-tests.sh -q -rs 2>&1 | tee "$out/pytest.txt" || failed+=(pytest)
  if [[ $mode == run ]]; then
    cora=$1
    scripts/python-tests.sh --run python/examples/gat_cora.py "$cora" --json "$out/gat_cora.json" 2>&1 |
      tee "$out/gat_cora.txt" || failed+=(gat_cora)
    for graph in er pl; do
      scripts/python-tests.sh --run python/examples/large_graph.py --graph "$graph" --json "$out/large_$graph.json" 2>&1 |
        tee "$out/large_$graph.txt" || failed+=("large_$graph")
    done
  fi
  if [[ ${#failed[@]} -gt 0 ]]; then
    echo "python-gpu: failed: ${failed[*]}" >&2
    exit 1
  fi
  echo "python-gpu: all passed"
  ;;
moses)
  dir=${1:?usage: scripts/python-gpu.sh moses DIR OUT}
  out=${2:?usage: scripts/python-gpu.sh moses DIR OUT}
  mkdir -p "$out"
  # 1024 molecules per batch (the usual size: launch-bound), then 8192 (the kernels' share grows).
  for batch in 1024 8192; do
    DFGNN_PY_OFFLINE=1 scripts/python-tests.sh --run python/examples/moses_train.py --dir "$dir" --device cuda \
      --molecules 250000 --test-molecules 20000 --batch "$batch" --heads 4 --hidden 128 --epochs 5 \
      --json "$out/moses_train_b$batch.json" 2>&1 | tee "$out/moses_train_b$batch.txt"
  done
  ;;
*)
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
