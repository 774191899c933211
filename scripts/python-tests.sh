#!/usr/bin/env bash
# The Python package's tests: builds the dfgnn wheel (maturin, stable Rust), installs it into a
# virtual environment with torch and PyG, and runs pytest over python/tests (CPU tensors, on the
# SIMT emulator).
#
#   scripts/python-tests.sh [pytest arguments...]
#   scripts/python-tests.sh --run SCRIPT [arguments...]   runs SCRIPT (an example) with that python
#
# DFGNN_PY_VENV: the environment (default ~/.cache/dfgnn/venv-py; made, then reused). A fresh one
# downloads about 3 GB (torch's PyPI wheel brings its CUDA libraries) through uv.
# DFGNN_PY_OFFLINE=1: build nothing and download nothing (the GPU machine: torch and PyG
# preinstalled in python3, no network): use the wheel already in target/python-wheels (and
# pytest from target/python-wheels/deps if python3 lacks it), installed into a temporary folder.
# DFGNN_REQUIRE_CUDA=1: the CUDA tests fail, rather than skip, without a GPU (the GPU machine).
# pytest-xdist is in the environment (not on the GPU machine): `-n 2 --dist loadfile` runs the
# test files on two workers, as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."

wheels=target/python-wheels
if [ "${DFGNN_PY_OFFLINE:-0}" = 1 ]; then
  python=python3
  # Into a folder of its own on PYTHONPATH: python3's environment stays as it is.
  site=${TMPDIR:-/tmp}/dfgnn-python-site
  rm -rf "$site"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-index --target "$site" "$wheels"/dfgnn-*.whl
  # pytest, from wheels carried in target/python-wheels/deps when python3 lacks it.
  if ! python3 -c "import pytest" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check --no-index --find-links "$wheels/deps" --target "$site" pytest
  fi
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
else
  venv=${DFGNN_PY_VENV:-$HOME/.cache/dfgnn/venv-py}
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  python=$venv/bin/python
  "$python" -m pip install --quiet --disable-pip-version-check uv
  "$venv/bin/uv" pip install --quiet --python "$python" \
    "torch==2.11.*" "torch-geometric==2.8.0.post1" "pytest>=8" "pytest-xdist>=3" "maturin==1.16.*" \
    "ziglang==0.13.*"
  rm -rf "$wheels"
  # zig links against glibc 2.28, so the wheel's manylinux_2_28 tag is honest (maturin finds zig
  # through the environment's python, hence the PATH).
  PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --release --zig --compatibility manylinux_2_28 \
    --manifest-path python/Cargo.toml --out "$wheels"
  "$venv/bin/uv" pip install --quiet --python "$python" --reinstall --no-deps "$wheels"/dfgnn-*.whl
fi
# From the repository root, so that `import dfgnn` is the installed wheel, not python/dfgnn.
"$python" -c "import dfgnn, torch; print('dfgnn from', dfgnn.__file__, '| torch', torch.__version__)"
if [ "${1:-}" = --run ]; then
  shift
  exec "$python" "$@"
fi
exec "$python" -m pytest -p no:cacheprovider python/tests "$@"
