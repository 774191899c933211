#!/usr/bin/env bash
# The benchmark suite on the GPU machine, from prebuilt binaries (no Rust there): dfgnn's suite,
# the peers in the same run, the report and the plots.
#
#   scripts/bench-suite.sh build         on a machine with Rust: builds target/release/dfgnn and
#                                        the criterion benchmark binary target/bench-bin/attention
#                                        (what the GPU machine runs; carry both)
#   scripts/bench-suite.sh suite OUT [ARGS]
#                                        graphs x models x shapes x schedules x passes
#                                        (`dfgnn bench suite`), then benches/peers.py on the same
#                                        graphs; writes OUT/suite.json, OUT/peers.json,
#                                        OUT/report.md and OUT/*.svg (about 8 minutes on an H200)
#   scripts/bench-suite.sh quick OUT [ARGS]
#                                        the same with one warm-up and at most 3 timed calls
#                                        (ARGS go to `dfgnn bench suite`, e.g. --graphs er-1M-d16)
#   scripts/bench-suite.sh scale OUT [er|pl]
#                                        GT forward+backward 4x64 (the plan) against edge count,
#                                        1 M to 1 G edges, uniform (er) and power-law (pl)
#                                        families; writes OUT/scale-<family>/ (JSON, report, plots)
#   scripts/bench-suite.sh criterion [ARGS]
#                                        the criterion benchmarks from target/bench-bin/attention
#                                        (ARGS e.g. --save-baseline main, --baseline main); set
#                                        CRITERION_HOME to choose where criterion keeps its data
#
# Environment: DFGNN (default target/release/dfgnn: `cargo build --release -p dfgnn-cli` on a
# machine with Rust), PYTHON (default python3; needs torch and torch_geometric, else the peers are
# skipped with a line saying so), DFGNN_GRAPH_TOOL_DIR (graph-tool's networks:
# scripts/fetch-graph-tool-data.sh) and DFGNN_DATA_DIR (planetoid/cora.npz, citeseer.npz); a
# missing data set is a skipped graph, listed in the report. A turbo-gnn wheel under .whl/
# (see docs/benchmarks.md) is installed for the peers when turbo_gnn is not importable. BACKEND
# (default cuda) is the suite's backend (`emulator` only to try the script on a tiny case).
# GRAPH_DIR (default /tmp/dfgnn-bench-graphs) holds the graphs' .npz files for the peers (kept
# out of OUT: the 1M-node graphs take about 70 MB each).
set -euo pipefail
cd "$(dirname "$0")/.."
dfgnn=${DFGNN:-target/release/dfgnn}
python=${PYTHON:-python3}
mode=${1:-}
out=${2:-}
usage() { sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
case $mode in
build)
  cargo build --release -p dfgnn-cli
  json=$(cargo bench -p dfgnn-benches --bench attention --no-run --message-format=json)
  exe=$(grep '"kind":\["bench"\]' <<<"$json" | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)
  [[ -n $exe ]] || { echo "bench-suite: cargo built no benchmark binary" >&2; exit 1; }
  mkdir -p target/bench-bin
  cp "$exe" target/bench-bin/attention
  echo "bench-suite: built $dfgnn and target/bench-bin/attention (from $exe)"
  exit 0
  ;;
criterion)
  shift
  [[ -x target/bench-bin/attention ]] || { echo "bench-suite: no target/bench-bin/attention (run \`scripts/bench-suite.sh build\` where Rust is)" >&2; exit 1; }
  exec target/bench-bin/attention --bench "$@"
  ;;
esac
[[ -n $mode && -n $out ]] || usage
shift 2
backend=${BACKEND:-cuda}
graphs_dir=${GRAPH_DIR:-/tmp/dfgnn-bench-graphs}
[[ -x $dfgnn ]] || { echo "bench-suite: no $dfgnn (scripts/bench-suite.sh build)" >&2; exit 1; }
mkdir -p "$out"

peers() {
  # The peers on the suite's graphs, then the joint report and plots.
  local budget=$1
  if ! "$python" -c "import torch, torch_geometric" 2>/dev/null; then
    echo "bench-suite: no torch/torch_geometric for $python: peers skipped" >&2
    "$dfgnn" bench report "$out/suite.json" --plots "$out" >"$out/report.md"
    return
  fi
  # turbo-gnn from the wheel under .whl/, unpacked into .whl/site (no install into the system's
  # Python, which may refuse it).
  export PYTHONPATH=$PWD/.whl/site${PYTHONPATH:+:$PYTHONPATH}
  if ! "$python" -c "import torch, turbo_gnn" 2>/dev/null; then
    for whl in .whl/turbo_gnn-*.whl; do
      [[ -e $whl ]] && "$python" -m pip install --quiet --no-deps --no-index --target .whl/site "$whl" || true
    done
  fi
  "$python" benches/peers.py --suite "$out/suite.json" --graphs "$graphs_dir" --out "$out/peers.json" \
    --case-budget-ms "$budget"
  "$dfgnn" bench report "$out/suite.json" "$out/peers.json" --plots "$out" >"$out/report.md"
}

case $mode in
suite)
  "$dfgnn" --backend "$backend" bench suite --out "$out" --write-graphs "$graphs_dir" --warmup 2 --repeats 10 \
    --case-budget-ms 250 --no-plots "$@"
  peers 300
  ;;
quick)
  "$dfgnn" --backend "$backend" bench suite --out "$out" --write-graphs "$graphs_dir" --quick --no-plots "$@"
  peers 100
  ;;
scale)
  family=${1:-er}
  case $family in
  # 1 M, 4 M, 16 M, 64 M, 256 M, 512 M, 1 G edges (power law: fewer after repeats are dropped).
  er) graphs=er-64K-d16,er-256K-d16,er-1M-d16,er-4M-d16,er-4M-d64,er-8M-d64,er-8M-d128 ;;
  pl) graphs=pl-64K-d16,pl-256K-d16,pl-1M-d16,pl-4M-d16,pl-4M-d64,pl-8M-d64,pl-8M-d128,pl-8M-d160 ;;
  *) echo "bench-suite: scale family er or pl, not $family" >&2; exit 2 ;;
  esac
  "$dfgnn" --backend "$backend" bench suite --out "$out/scale-$family" --graphs "$graphs" --models gt --shapes 4x64 \
    --schedules auto --warmup 1 --repeats 5 --case-budget-ms 2000 --input-sets 1
  ;;
*)
  echo "bench-suite: mode suite, quick or scale, not $mode" >&2
  exit 2
  ;;
esac
echo "bench-suite: done; $out"
