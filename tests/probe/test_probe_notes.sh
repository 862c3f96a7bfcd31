#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library carries every USDT probe the man page lists (issue 37):
# readelf -n shows a stapsdt note, provider rpcrdma, for each probe named
# in rpcrdma(3) TRACING, and no probe the page does not list.
# usage: test_probe_notes.sh LIBRPCRDMA_SO RPCRDMA_3
set -euo pipefail
lib=$1 page=$2
command -v readelf >/dev/null || { echo "SKIP: readelf not installed"; exit 77; }
in_lib=$(readelf -n "$lib" | awk '/Provider: rpcrdma/ {p=1; next} p && /Name:/ {print $2; p=0}' | sort -u)
# the page's probe list: each ".B name" right after a ".TP" between ".SH
# TRACING" and the next .SH
in_page=$(awk '/^\.SH TRACING/ {t=1; next} /^\.SH/ {t=0}
	t && tp && /^\.B [a-z0-9_]+$/ {print $2} {tp = /^\.TP/}' "$page" | sort -u)
fail=0
if [ -z "$in_lib" ]; then
	echo "FAIL: no rpcrdma stapsdt note in $lib"
	exit 1
fi
for p in $in_page; do
	grep -qx "$p" <<<"$in_lib" || { echo "FAIL: $p (rpcrdma(3)) not in $lib"; fail=1; }
done
for p in $in_lib; do
	grep -qx "$p" <<<"$in_page" || { echo "FAIL: $p in $lib, not in rpcrdma(3) TRACING"; fail=1; }
done
n=$(wc -w <<<"$in_lib")
[ "$n" -ge 19 ] || { echo "FAIL: only $n probes"; fail=1; }
[ $fail -eq 0 ] && echo "$n probes in $lib, each listed in rpcrdma(3)"
exit $fail
