#!/bin/sh
# rpcrdma-ping -P PROG -V VERS without -p asks the host's rpcbind for the
# port (rpcrdma_rpcb_getport, netid rdma): against rpcrdma-perf server
# --register on a kernel-chosen port it reaches that port; for a version
# rpcbind has no entry for it says so and falls back to port 20049 (RFC
# 8166 §9). Run under rpcbind_run.sh.
# usage: test_ping_rpcb.sh PERF PING
set -u
PERF=$1
PING=$2
TMP=$(mktemp -d)
. "$(dirname "$0")/../tools/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

perf_server_start --register
[ "$RPORT" != 20049 ] || fail "the kernel chose port 20049: cannot tell the lookup from the default"
"$PING" 127.0.0.1 -P 537169921 -V 1 -c 1 -w 5 >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "ping through rpcbind"; }
cat "$TMP/out"
grep -q "^RPCRDMA-PING 127.0.0.1 port $RPORT program 537169921 version 1: connected" "$TMP/out" ||
	fail "ping did not use the registered port $RPORT"
"$PING" 127.0.0.1 -P 537169921 -V 7 -c 1 -w 2 >"$TMP/out7" 2>&1
cat "$TMP/out7"
grep -q "^rpcrdma-ping: rpcbind on 127.0.0.1: .*; trying port 20049$" "$TMP/out7" ||
	fail "no fallback message for an unregistered version"
# -p wins over rpcbind
"$PING" 127.0.0.1 -P 537169921 -V 1 -p "$RPORT" -c 1 -w 5 >"$TMP/outp" 2>&1 || fail "ping -p"
! grep -q "rpcbind" "$TMP/outp" || fail "-p given but rpcbind asked"
perf_server_stop || fail "server exit status"
echo ok
