#!/usr/bin/env bash
# The benchmark suite on the GPU machine, from prebuilt binaries (no Rust there): dfgnn's suite,
# the peers in the same run, the report and the plots; and, back here, adopting the results.
#
#   scripts/bench-suite.sh build         on a machine with Rust: builds target/release/dfgnn and
#                                        the criterion benchmark binary target/bench-bin/attention
#                                        (what the GPU machine runs; carry both)
#   scripts/bench-suite.sh report OUT [ARGS]
#                                        the whole report in one call (BUDGET_S, default 540 s,
#                                        at least 500):
#                                        the suite on the real graphs (full protocol) and on the
#                                        generated ones (one warm-up, 100 ms per case), the peers
#                                        on the same graph files, then `dfgnn bench report`:
#                                        OUT/{real,gen}/{suite,peers}.json, OUT/report.md,
#                                        OUT/headline.md, OUT/results-block.md (docs/results.md's
#                                        generated block), OUT/*.svg, OUT/stages.txt
#   scripts/bench-suite.sh scale OUT [ARGS]
#                                        the scale ladder in one call (BUDGET_S, default 540 s,
#                                        at least 500):
#                                        GT 4x64 forward+backward (the plan) against edges, uniform
#                                        and power-law graphs from 1 M to 1.07 G edges, PyG and the
#                                        other peers up to 67 M; OUT/scale-{small,large}/suite.json,
#                                        OUT/scale-small/peers.json, report and plots
#                                        (report, scale: ARGS go to every `dfgnn bench suite`
#                                        call, e.g. --shapes 2x4 for a try on the emulator)
#   scripts/bench-suite.sh criterion OUT [ARGS]
#                                        the criterion benchmarks (target/bench-bin/attention, or
#                                        BENCH_BIN), ARGS e.g. --save-baseline main, --baseline
#                                        main; criterion's data in CRITERION_HOME (default
#                                        target/criterion), packed into OUT/criterion.tar; the
#                                        output appended to OUT/criterion.txt
#   scripts/bench-suite.sh suite OUT [ARGS]
#                                        the suite (ARGS go to `dfgnn bench suite`, e.g. --graphs
#                                        er-1M-d16) and the peers on its graphs, no time budget:
#                                        OUT/run/{suite,peers}.json, OUT/report.md, OUT/*.svg
#   scripts/bench-suite.sh quick OUT [ARGS]
#                                        the same with one warm-up and at most 3 timed calls
#   scripts/bench-suite.sh adopt DIR...  here: copies the JSON of report/scale outputs (DIR or
#                                        DIR.tar) into docs/bench/ (<part>-suite.json,
#                                        <part>-peers.json), regenerates docs/bench/report.md, the
#                                        plots, README.md's headline and docs/results.md's
#                                        generated block from every docs/bench/*.json
#
# Environment: DFGNN (default target/release/dfgnn: `cargo build --release -p dfgnn-cli` on a
# machine with Rust), PYTHON (default python3; needs torch and torch_geometric, else the peers are
# skipped with a line saying so), DFGNN_GRAPH_TOOL_DIR (graph-tool's networks:
# scripts/fetch-graph-tool-data.sh) and DFGNN_DATA_DIR (planetoid/cora.npz, citeseer.npz); a
# missing data set is a skipped graph, listed in the report. A turbo-gnn wheel under .whl/
# (see docs/benchmarks.md) is installed for the peers when turbo_gnn is not importable, and the
# dfgnn wheel in target/python-wheels (scripts/python-tests.sh) for the dfgnn-python peers. BACKEND
# (default cuda) is the suite's backend (`emulator` only to try the script on a tiny case).
# GRAPH_DIR (default /tmp/dfgnn-bench-graphs) holds the graphs' .npz files for the peers (kept
# out of OUT: the 1M-node graphs take about 70 MB each). PACK_DIR: when set, `report`, `scale`
# and `suite` also pack OUT into PACK_DIR/bench-<mode>.tar (the device tool brings back at most 8
# files). REAL_GRAPHS, GEN_GRAPHS (report) and SCALE_SMALL, SCALE_LARGE (scale) replace the
# graph lists (comma-separated); REAL_SHAPES (default 1x128,4x64,8x32,4x32) the real graphs'
# shapes in `report` (4x32 is the shape of Cora's target).
set -euo pipefail
cd "$(dirname "$0")/.."
dfgnn=${DFGNN:-target/release/dfgnn}
python=${PYTHON:-python3}
mode=${1:-}
out=${2:-}
usage() { sed -n '2,55p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

# The suite's real graphs and the generated ones (cli/src/suite/mod.rs, DEFAULT_GRAPHS); the
# generated ones cheapest first, so that the 1M-node graphs (about 40 s and 2.5 min) start well
# before the stage's time limit.
real_graphs=${REAL_GRAPHS:-gt-email-Enron,gt-as-22july06,gt-pgp-strong-2009,gt-cond-mat-2005,gt-astro-ph,gt-hep-th,gt-power,cora,citeseer}
gen_graphs=${GEN_GRAPHS:-batch-1024x120-d50,mol-16384,er-1M-d16,pl-1M-d16}
# The scale ladder, uniform and power-law in turn, smallest first (a cut drops the largest):
# 1 M, 4 M and 67 M edges with the peers (the 16.7 M point is the report's er-1M-d16 and
# pl-1M-d16), then 268 M, 537 M and 1.07 G edges (power law: fewer edges after repeats are
# dropped, hence d160 at the top).
scale_small=${SCALE_SMALL:-er-64K-d16,pl-64K-d16,er-256K-d16,pl-256K-d16,er-4M-d16,pl-4M-d16}
scale_large=${SCALE_LARGE:-er-4M-d64,pl-4M-d64,er-8M-d64,pl-8M-d64,er-8M-d128,pl-8M-d160}

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
adopt)
  shift
  [[ $# -gt 0 ]] || usage
  [[ -x $dfgnn ]] || { echo "bench-suite: no $dfgnn (cargo build --release -p dfgnn-cli)" >&2; exit 1; }
  for src in "$@"; do
    if [[ -f $src ]]; then
      dir=$(mktemp -d)
      tar -xf "$src" -C "$dir"
    else
      dir=$src
    fi
    found=0
    for suite_json in "$dir"/*/suite.json; do
      [[ -e $suite_json ]] || continue
      part_dir=$(dirname "$suite_json")
      part=$(basename "$part_dir")
      # A part's files come from one run: an older run's peers never sit beside a newer suite.
      rm -f "docs/bench/$part-suite.json" "docs/bench/$part-peers.json"
      for json in "$part_dir"/suite.json "$part_dir"/peers.json; do
        [[ -e $json ]] || continue
        cp "$json" "docs/bench/$part-$(basename "$json")"
        echo "bench-suite: $json -> docs/bench/$part-$(basename "$json")"
      done
      found=1
    done
    [[ $found == 1 ]] || { echo "bench-suite: no */suite.json in $src" >&2; exit 1; }
    [[ $dir == "$src" ]] || rm -rf "$dir"
  done
  "$dfgnn" bench report docs/bench/*.json --plots docs/bench --readme README.md --results docs/results.md \
    >docs/bench/report.md
  echo "bench-suite: docs/bench/report.md, the plots, README.md's headline and docs/results.md's block regenerated"
  exit 0
  ;;
esac
[[ -n $mode && -n $out ]] || usage
shift 2
backend=${BACKEND:-cuda}
graphs_dir=${GRAPH_DIR:-/tmp/dfgnn-bench-graphs}
mkdir -p "$out"

if [[ $mode == criterion ]]; then
  bin=${BENCH_BIN:-target/bench-bin/attention}
  [[ -x $bin ]] || { echo "bench-suite: no $bin (run \`scripts/bench-suite.sh build\` where Rust is)" >&2; exit 1; }
  export CRITERION_HOME=${CRITERION_HOME:-$PWD/target/criterion}
  mkdir -p "$CRITERION_HOME"
  echo "== $bin --bench $* (CRITERION_HOME=$CRITERION_HOME)" >>"$out/criterion.txt"
  rc=0
  "$bin" --bench "$@" 2>&1 | tee -a "$out/criterion.txt" || rc=$?
  tar -cf "$out/criterion.tar" -C "$CRITERION_HOME" .
  echo "bench-suite: done (exit $rc); $out/criterion.txt, $out/criterion.tar"
  exit "$rc"
fi

[[ -x $dfgnn ]] || { echo "bench-suite: no $dfgnn (scripts/bench-suite.sh build)" >&2; exit 1; }
started=$SECONDS
budget=${BUDGET_S:-540}
# Seconds left of the budget once `reserve` seconds are kept for what follows (at least 1).
left() { local s=$((budget - (SECONDS - started) - $1)); echo $((s > 1 ? s : 1)); }
# One stage: its command under a hard limit of `limit` seconds (the stage's own time limit is
# set below it, so the kill is only a backstop); its wall time goes to OUT/stages.txt. A stage
# that fails or is killed leaves what it wrote (every writer saves after each graph or case).
stage() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS rc=0
  echo "bench-suite: $name (at most ${limit} s)" >&2
  timeout --kill-after=10 "$limit" "$@" || rc=$?
  echo "$name: $((SECONDS - t0)) s, exit $rc$([[ $rc == 124 || $rc == 137 ]] && echo ' (stopped at its limit)')" \
    >>"$out/stages.txt"
}

have_peers() {
  if ! "$python" -c "import torch, torch_geometric" 2>/dev/null; then
    echo "bench-suite: no torch/torch_geometric for $python: peers skipped" | tee -a "$out/stages.txt" >&2
    return 1
  fi
  # turbo-gnn from the wheel under .whl/, unpacked into .whl/site (no install into the system's
  # Python, which may refuse it).
  export PYTHONPATH=$PWD/.whl/site${PYTHONPATH:+:$PYTHONPATH}
  if ! "$python" -c "import torch, turbo_gnn" 2>/dev/null; then
    for whl in .whl/turbo_gnn-*.whl; do
      [[ -e $whl ]] && "$python" -m pip install --quiet --no-deps --no-index --target .whl/site "$whl" || true
    done
  fi
  # dfgnn's own Python package (the dfgnn-python peers) from the wheel of this tree in
  # target/python-wheels (scripts/python-tests.sh builds it), unpacked afresh on every run so that
  # an older one never stands in for it; without a wheel, whatever dfgnn $python imports.
  local site=${TMPDIR:-/tmp}/dfgnn-bench-site wheels=(target/python-wheels/dfgnn-*.whl)
  rm -rf "$site"
  if [[ -e ${wheels[0]} ]]; then
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps --no-index --target "$site" "${wheels[@]}"
    export PYTHONPATH=$site:$PYTHONPATH
  fi
  if ! "$python" -c "import dfgnn.nn" 2>/dev/null; then
    echo "bench-suite: dfgnn is not importable by $python (no wheel in target/python-wheels): the dfgnn-python" \
      "peers are skipped (peers.json's skipped says why)" | tee -a "$out/stages.txt" >&2
  fi
}

# The peers on a suite file's graphs: peers SUITE_DIR LIMIT [ARGS] (ARGS go to peers.py).
peers() {
  local dir=$1 limit=$2
  shift 2
  stage "peers $(basename "$dir")" $((limit + 30)) "$python" benches/peers.py --suite "$dir/suite.json" \
    --graphs "$graphs_dir" --out "$dir/peers.json" --time-limit-s "$limit" "$@"
}

# The report and plots of every JSON under OUT, README's headline table and docs/results.md's
# generated block (what `adopt` writes into them, from this run's files alone).
report() {
  local files=("$out"/*/suite.json)
  for f in "$out"/*/peers.json; do [[ -e $f ]] && files+=("$f"); done
  "$dfgnn" bench report "${files[@]}" --plots "$out" >"$out/report.md"
  "$dfgnn" bench report --headline "${files[@]}" >"$out/headline.md"
  "$dfgnn" bench report --results-block "${files[@]}" >"$out/results-block.md"
  echo "total: $((SECONDS - started)) s" >>"$out/stages.txt"
  if [[ -n ${PACK_DIR:-} ]]; then
    mkdir -p "$PACK_DIR"
    tar -cf "$PACK_DIR/bench-$mode.tar" -C "$out" .
    echo "bench-suite: packed into $PACK_DIR/bench-$mode.tar" >&2
  fi
}

suite=("$dfgnn" --backend "$backend" bench suite --no-plots)

# The least BUDGET_S of `report` and `scale`: their first stage keeps back 450 s for the later
# ones (`left`) and needs about 50 of its own; below this it would get a second.
least_budget=500
if [[ $mode == report || $mode == scale ]] && ((budget < least_budget)); then
  echo "bench-suite: $mode needs BUDGET_S of at least $least_budget s; got $budget" >&2
  exit 2
fi

case $mode in
report)
  # Seconds kept back for what follows each stage: the generated graphs' suite (about 3 min), the
  # peers (about 1.5 min each) and the report.
  # The real graphs also at 4x32, the shape of Cora's target (unless ARGS choose the shapes).
  real_shapes=()
  [[ " $* " == *" --shapes"* ]] || real_shapes=(--shapes "${REAL_SHAPES:-1x128,4x64,8x32,4x32}")
  # The real graphs' cases take 0.02-0.7 ms: 50 timed calls each (10 let a few slow calls move
  # the median; two runs of one plan differed by up to 1.48x at a99f0ed), about 10 s more in all.
  # Their peers keep 10 (slower, and judged by margins of several times).
  stage "suite real" "$(left 420)" "${suite[@]}" --out "$out/real" --graphs "$real_graphs" --write-graphs "$graphs_dir" \
    --warmup 2 --repeats 50 --case-budget-ms 200 --time-limit-s "$(left 450)" "${real_shapes[@]}" "$@"
  stage "suite gen" "$(left 200)" "${suite[@]}" --out "$out/gen" --graphs "$gen_graphs" --write-graphs "$graphs_dir" \
    --warmup 1 --repeats 10 --case-budget-ms 100 --time-limit-s "$(left 300)" "$@"
  if have_peers; then
    # The generated graphs' peers first (three of the headline's four graphs), then the real ones.
    if [[ -e $out/gen/suite.json ]]; then peers "$out/gen" "$(left 120)"; fi
    if [[ -e $out/real/suite.json ]]; then peers "$out/real" "$(left 45)" --repeats 10; fi
  fi
  report
  ;;
scale)
  common=(--models gt --shapes 4x64 --schedules auto --warmup 1 --repeats 5 --case-budget-ms 2000 --input-sets 1)
  stage "suite scale-small" "$(left 420)" "${suite[@]}" --out "$out/scale-small" --graphs "$scale_small" \
    --write-graphs "$graphs_dir" "${common[@]}" --time-limit-s "$(left 450)" "$@"
  if have_peers && [[ -e $out/scale-small/suite.json ]]; then
    peers "$out/scale-small" "$(left 360)"
  fi
  stage "suite scale-large" "$(left 15)" "${suite[@]}" --out "$out/scale-large" --graphs "$scale_large" "${common[@]}" \
    --time-limit-s "$(left 120)" "$@"
  report
  ;;
suite | quick)
  # No time budget: OUT/run/suite.json and OUT/run/peers.json.
  if [[ $mode == suite ]]; then
    protocol=(--warmup 2 --repeats 10 --case-budget-ms 250) peer_budget=300
  else
    protocol=(--quick) peer_budget=100
  fi
  budget=1000000
  stage "suite" "$(left 0)" "${suite[@]}" --out "$out/run" --write-graphs "$graphs_dir" "${protocol[@]}" "$@"
  if have_peers; then peers "$out/run" "$(left 0)" --case-budget-ms "$peer_budget"; fi
  report
  ;;
*)
  echo "bench-suite: mode build, report, scale, criterion, suite, quick or adopt, not $mode" >&2
  exit 2
  ;;
esac
echo "bench-suite: done; $out ($(tr '\n' ';' <"$out/stages.txt"))"
