#!/usr/bin/env bash
# The environment of a call's run script on the GPU machine, sourced (`. scripts/gpu-env.sh`):
# the CUDA libraries, the CUDA backend, the graph data carried in `.gpu/`, the folders /tmp/t
# (binaries) and /tmp/o (logs), and the device's name and driver in /tmp/o/device.txt. A run
# script that carries only some of the graph-tool files (the carry limit) sets
# DFGNN_GRAPH_TOOL_DIR before sourcing this, and keeps it through `scripts/gpu-call.sh`.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} DFGNN_BACKEND=cuda
export DFGNN_GRAPH_TOOL_DIR=${DFGNN_GRAPH_TOOL_DIR:-.gpu/graph-tool} DFGNN_DATA_DIR=.gpu
mkdir -p /tmp/t /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/device.txt 2>&1 || true
