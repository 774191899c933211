#!/usr/bin/env bash
# Fetches graph-tool's bundled sample networks (the `.gt.gz` files of its `collection` folder)
# from Debian's python3-graph-tool package without installing it: `apt-get download` fetches the
# .deb, `dpkg-deb -x` unpacks it into a scratch folder, and only the collection files are kept.
#
#   scripts/fetch-graph-tool-data.sh [DIR]      (DIR defaults to /tmp/dfgnn-graph-tool)
#   export DFGNN_GRAPH_TOOL_DIR=DIR             (what graphs/tests/real_data.rs reads)
#
# Needs apt-get and dpkg-deb (Debian/Ubuntu) and a reachable package mirror; runs apt-get update
# first when the package is unknown (as root). Prints the files and their sizes.
set -euo pipefail

dir=${1:-/tmp/dfgnn-graph-tool}
if compgen -G "$dir/*.gt.gz" > /dev/null; then
    echo "graph-tool collection already in $dir"
    ls -l "$dir"
    exit 0
fi
if ! apt-cache show python3-graph-tool > /dev/null 2>&1; then
    echo "python3-graph-tool is unknown to apt: running apt-get update"
    apt-get update -qq
fi
work=$(mktemp -d)
chmod 755 "$work"  # apt downloads as the _apt user when it can
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q python3-graph-tool)
dpkg-deb -x "$work"/python3-graph-tool_*.deb "$work/root"
collection=$(find "$work/root" -type d -path '*graph_tool/collection' | head -n 1)
if [ -z "$collection" ] || ! compgen -G "$collection/*.gt.gz" > /dev/null; then
    echo "error: no graph_tool/collection/*.gt.gz in the package" >&2
    exit 1
fi
mkdir -p "$dir"
cp "$collection"/*.gt.gz "$dir"/
echo "graph-tool collection in $dir:"
ls -l "$dir"
