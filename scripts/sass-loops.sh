#!/usr/bin/env bash
# The loops of kernels' SASS, for reading their instruction cost on a machine without a GPU:
# assembles the PTX for sm_90 (ptxas, as scripts/ptx-report.sh), disassembles each KERNEL
# (cuobjdump and nvdisasm, fetched from PyPI into ~/.cache/dfgnn/cuda-tools the first time) and
# prints its loops (scripts/sass-loops.py: address range, static instruction count, mix).
#
#   scripts/sass-loops.sh [--ptx FILE] [--keep DIR] KERNEL...
#
# --keep DIR also writes DIR/KERNEL.sass. Static counts: a loop inside another runs once per
# iteration of the outer one; see docs/results.md ("sixth session") for a worked reading.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ptx=$root/device/ptx/dfgnn_device.ptx
keep=
while [[ $# -gt 0 ]]; do
  case $1 in
  --ptx) ptx=$2; shift 2 ;;
  --keep) keep=$2; shift 2 ;;
  *) break ;;
  esac
done
[[ $# -gt 0 ]] || { echo "usage: scripts/sass-loops.sh [--ptx FILE] [--keep DIR] KERNEL..." >&2; exit 2; }
ptxas=${DFGNN_PTXAS:-$(command -v ptxas || python3 -c "import nvidia,os;print(os.path.join(list(nvidia.__path__)[0],'cu13','bin','ptxas'))")}
tools=${DFGNN_CUDA_TOOLS:-$HOME/.cache/dfgnn/cuda-tools}
version=13.2.51
if [[ ! -x $tools/cuobjdump/nvidia/cu13/bin/cuobjdump || ! -x $tools/nvdisasm/nvidia/cu13/bin/nvdisasm ]]; then
  for tool in cuobjdump nvdisasm; do
    mkdir -p "$tools/$tool"
    python3 -m pip download --quiet --no-deps --only-binary :all: -d "$tools/wheels" "nvidia-cuda-$tool==$version"
    python3 -m zipfile -e "$tools"/wheels/nvidia_cuda_"$tool"-"$version"-*.whl "$tools/$tool"
    chmod +x "$tools/$tool/nvidia/cu13/bin/$tool"
  done
fi
export PATH=$tools/nvdisasm/nvidia/cu13/bin:$PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ptxas" -arch=sm_90 -o "$work/module.cubin" "$ptx"
for kernel in "$@"; do
  "$tools/cuobjdump/nvidia/cu13/bin/cuobjdump" -sass -fun "$kernel" "$work/module.cubin" >"$work/$kernel.sass"
  grep -q "Function : $kernel" "$work/$kernel.sass" || { echo "sass-loops: no kernel $kernel in $ptx" >&2; exit 1; }
  [[ -z $keep ]] || { mkdir -p "$keep"; cp "$work/$kernel.sass" "$keep/"; }
  echo "== $kernel"
  python3 "$root/scripts/sass-loops.py" "$work/$kernel.sass"
done
