#!/bin/sh
# --rdma-version of rpcrdma-ping and rpcrdma-perf against real rpcrdma-perf
# server processes over loopback (softiwarp): a Version Two capable server
# serves clients of every policy (perf checks every WRITE's checksum); a
# Version One server serves `auto` (fallback) and fails `2` with ERR_VERS
# (exit 1); a bad value is a usage error (exit 2).
# usage: test_tool_rdma_version.sh PING PERF
set -u
PING=$1 PERF=$2
TMP=$(mktemp -d)
. "$(dirname "$0")/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

perf_server_start --rdma-version 2
for v in 1 2 auto; do
	"$PING" 127.0.0.1 -p "$RPORT" -c 2 -i 0.05 --rdma-version $v >"$TMP/p$v.out" 2>&1 ||
		{ cat "$TMP/p$v.out"; fail "ping --rdma-version $v to a v2-capable server"; }
	grep -q "^2 calls, 2 replies, 0% failed" "$TMP/p$v.out" || fail "ping $v summary"
done
"$PERF" client 127.0.0.1 --port "$RPORT" --no-progress --peer rdma --workload write \
	--sizes 1K,64K --count 50 --rdma-version 2 >"$TMP/perf.out" 2>&1 ||
	{ cat "$TMP/perf.out"; fail "perf client --rdma-version 2"; }
perf_server_stop || fail "v2 server exit status"

perf_server_start
"$PING" 127.0.0.1 -p "$RPORT" --rdma-version auto >"$TMP/auto.out" 2>&1 ||
	{ cat "$TMP/auto.out"; fail "ping --rdma-version auto to a v1 server"; }
"$PING" 127.0.0.1 -p "$RPORT" --rdma-version 2 >"$TMP/v2.out" 2>&1
rc=$?
cat "$TMP/v2.out"
[ $rc -eq 1 ] || fail "ping --rdma-version 2 to a v1 server: exit $rc, want 1"
grep -q "ERR_VERS" "$TMP/v2.out" || fail "no ERR_VERS in the error"
"$PING" 127.0.0.1 -p "$RPORT" --rdma-version 3 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--rdma-version 3 is not a usage error"
echo "test_tool_rdma_version: ok"
