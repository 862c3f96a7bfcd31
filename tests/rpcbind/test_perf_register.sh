#!/bin/sh
# rpcrdma-perf server --register: while it runs, rpcinfo lists its program
# (537169921) under netids rdma and rdma6 with the universal addresses of
# its port; after SIGTERM, not at all. Run under rpcbind_run.sh.
# usage: test_perf_register.sh PERF
set -u
PERF=$1
TMP=$(mktemp -d)
. "$(dirname "$0")/../tools/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

perf_server_start --register
hi=$((RPORT / 256)) lo=$((RPORT % 256))
rpcinfo >"$TMP/up" 2>&1 || fail "rpcinfo"
grep -E ' (rdma|rdma6) ' "$TMP/up"
grep -Eq "^ *537169921 +1 +rdma +0\.0\.0\.0\.$hi\.$lo " "$TMP/up" || fail "no rdma entry for port $RPORT"
grep -Eq "^ *537169921 +1 +rdma6 +::\.$hi\.$lo " "$TMP/up" || fail "no rdma6 entry for port $RPORT"
perf_server_stop || fail "server exit status $?"
rpcinfo >"$TMP/down" 2>&1 || fail "rpcinfo"
! grep -q "^ *537169921 " "$TMP/down" || fail "entries left after the server stopped"
echo ok
