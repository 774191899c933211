#!/usr/bin/env bash
# One line per kernel of a PTX module: registers, stack frame, spills (ptxas -arch=sm_90 -v).
#   scripts/ptx-report.sh [PTX]        (default: device/ptx/dfgnn_device.ptx)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ptx=${1:-$root/device/ptx/dfgnn_device.ptx}
ptxas=${DFGNN_PTXAS:-$(command -v ptxas || python3 -c "import nvidia,os;print(os.path.join(list(nvidia.__path__)[0],'cu13','bin','ptxas'))")}
"$ptxas" -arch=sm_90 -v -o /dev/null "$ptx" 2>&1 | awk '
  /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
  /bytes stack frame/ { stack = $1; spills = $5 + $9 }
  /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1); printf "%-28s %4d registers %5d B stack %5d B spilled\n", name, regs, stack, spills }
' | sort
