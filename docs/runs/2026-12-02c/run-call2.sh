#!/usr/bin/env bash
# Call 2: call 1 returned 8 of its 56 files (a call returns at most 8; the rest are lost with the
# call's $OUT); this recovered turbo-gnn's wheel from /tmp/whl of the still-warm machine.
ls /tmp/whl; f=$(find / -name ncu-gt-er-1M-d16.csv 2>/dev/null | head -1); echo "found: $f"; d=$(dirname "$f"); [ -n "$f" ] && tar -cf $OUT/call1-out.tar -C "$d" . ; cp /tmp/whl/*.whl $OUT/ 2>/dev/null; ls -la $OUT
