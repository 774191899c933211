#!/usr/bin/env bash
# Fetches the MOSES molecule sets: the `moses/dataset/data/*.csv.gz` files of the PyPI package
# molsets 0.3.1 (`pip download --no-deps`, nothing installed; only the three SMILES files are
# kept: train.csv.gz 10.2 MB, test.csv.gz 1.4 MB, test_scaffolds.csv.gz 1.3 MB).
#
#   scripts/fetch-moses.sh [DIR]        (DIR defaults to /tmp/dfgnn-moses)
#   export DFGNN_MOSES_DIR=DIR          (what dfgnn-graphs' moses tests and dfgnn.datasets read)
#
# Needs python3 with pip and a reachable PyPI. Prints the files and their sizes.
set -euo pipefail

dir=${1:-/tmp/dfgnn-moses}
files=(train.csv.gz test.csv.gz test_scaffolds.csv.gz)
if [ -f "$dir/${files[0]}" ] && [ -f "$dir/${files[1]}" ] && [ -f "$dir/${files[2]}" ]; then
    echo "MOSES already in $dir"
    ls -l "$dir"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$work" molsets==0.3.1
mkdir -p "$dir"
python3 - "$work"/molsets-0.3.1-*.whl "$dir" "${files[@]}" <<'PY'
import shutil, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for name in names:
        with z.open(f"moses/dataset/data/{name}") as src, open(f"{out}/{name}", "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
ls -l "$dir"
