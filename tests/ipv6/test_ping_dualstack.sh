#!/bin/sh
# rpcrdma-ping over IPv6 (::1) and IPv4 (127.0.0.1) against one
# rpcrdma-perf server on its default (dual-stack) listener.
# usage: test_ping_dualstack.sh PING PERF
set -u
PING=$1 PERF=$2
TMP=$(mktemp -d)
. "$(dirname "$0")/../tools/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null ||
	{ echo "SKIP: no IPv6 loopback on this host"; exit 77; }
perf_server_start
for host in ::1 127.0.0.1; do
	"$PING" "$host" -p "$RPORT" -c 2 -i 0.05 >"$TMP/ping.out" 2>&1
	rc=$?
	cat "$TMP/ping.out"
	[ $rc -eq 0 ] || fail "ping $host: exit status $rc, want 0"
	n=$(grep -c "ready and waiting: seq=[12] " "$TMP/ping.out")
	[ "$n" -eq 2 ] || fail "ping $host: want 2 replies, got $n"
done
perf_server_stop || fail "server exit status $?"
echo ok
