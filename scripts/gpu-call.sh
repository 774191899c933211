#!/usr/bin/env bash
# The start of every call on the GPU machine: unpacks the call's archive, runs every GPU test and
# the main job on CUDA, and says how each went.
#
#   scripts/gpu-call.sh ARCHIVE [BINARY]
#
# ARCHIVE (`.tar.xz`, built on a machine with Rust) holds the `gpu-tests` folder of
# `scripts/gpu-tests.sh build` and the `dfgnn` binary as BINARY (default `F`); it is unpacked
# into /tmp/t. The tests' log goes to /tmp/o/gpu-tests.txt and the main job's to
# /tmp/o/main-job.txt, with their exit statuses at the end; the two statuses are printed here.
# Exits non-zero when either failed, so that a run script can stop before timing a broken build.
set -uo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: scripts/gpu-call.sh ARCHIVE [BINARY]" >&2; exit 2; }
archive=$1
binary=${2:-F}
. scripts/gpu-env.sh
start=$(date +%s)
tar -xJf "$archive" -C /tmp/t || { echo "gpu-call: cannot unpack $archive" >&2; exit 1; }
scripts/gpu-tests.sh run /tmp/t/gpu-tests > /tmp/o/gpu-tests.txt 2>&1
tests=$?
echo "gpu-tests rc=$tests at $(($(date +%s) - start)) s" | tee -a /tmp/o/gpu-tests.txt
"/tmp/t/$binary" --backend cuda run > /tmp/o/main-job.txt 2>&1
job=$?
echo "main job rc=$job at $(($(date +%s) - start)) s" | tee -a /tmp/o/main-job.txt
((tests == 0 && job == 0))
