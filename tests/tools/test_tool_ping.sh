#!/bin/sh
# rpcrdma-ping against a real rpcrdma-perf server process over loopback
# (softiwarp): replies with positive round-trip times, rpcinfo-style errors
# for a program or version the server does not have, a timeout when the
# server is stopped, connection refused once it is gone, and the exit
# status of each case.
# usage: test_tool_ping.sh PING PERF
set -u
PING=$1 PERF=$2
TMP=$(mktemp -d)
. "$(dirname "$0")/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

perf_server_start

# three calls, each "ready and waiting" with an RTT > 0
"$PING" 127.0.0.1 -p "$RPORT" -c 3 -i 0.05 >"$TMP/ok.out" 2>&1
rc=$?
cat "$TMP/ok.out"
[ $rc -eq 0 ] || fail "ping exit status $rc, want 0"
n=$(grep -c "program 537169921 version 1 ready and waiting: seq=[123] xid=0x[0-9a-f]* rtt=" "$TMP/ok.out")
[ "$n" -eq 3 ] || fail "want 3 replies, got $n"
grep "rtt=" "$TMP/ok.out" | sed 's/.*rtt=\([0-9.]*\) us/\1/' | awk '$1 <= 0 { bad = 1 } END { exit bad }' ||
	fail "an RTT is not positive"
grep -q "^3 calls, 3 replies, 0% failed, rtt min/avg/max = " "$TMP/ok.out" || fail "summary line"

# --ccp: the server's CONF_RDMA answer (RFC 5666 §6, docs/ccp.md); with
# RFC 8797 private data both ways it changes nothing
"$PING" 127.0.0.1 -p "$RPORT" --ccp >"$TMP/ccp.out" 2>&1
rc=$?
cat "$TMP/ccp.out"
[ $rc -eq 0 ] || fail "--ccp: exit status $rc, want 0"
grep -Eq "^CONF_RDMA \(program 100417\): maxcall_sendsize 4096 align 4 maxrdmaread [1-9][0-9]*; inline send 4096 \(unchanged\)$" \
	"$TMP/ccp.out" || fail "--ccp: no CONF_RDMA line"

# a program the server does not serve: PROG_UNAVAIL, exit 1
"$PING" 127.0.0.1 -p "$RPORT" -P 100003 -V 3 >"$TMP/prog.out" 2>&1
rc=$?
cat "$TMP/prog.out"
[ $rc -eq 1 ] || fail "PROG_UNAVAIL: exit status $rc, want 1"
grep -q "RPC: Program unavailable" "$TMP/prog.out" || fail "no 'Program unavailable'"
grep -q "program 100003 version 3 is not available" "$TMP/prog.out" || fail "rpcinfo line"

# a version it does not serve: PROG_MISMATCH with the range it has
"$PING" 127.0.0.1 -p "$RPORT" -V 9 >"$TMP/vers.out" 2>&1
rc=$?
cat "$TMP/vers.out"
[ $rc -eq 1 ] || fail "PROG_MISMATCH: exit status $rc, want 1"
grep -q "low version = 1, high version = 1" "$TMP/vers.out" || fail "no version range"

# every thread of process $1 is stopped (state T): SIGSTOP stops a
# process's threads one by one as each next runs, after kill returned; on
# a loaded machine the progress thread answered a ping in between.
all_stopped() {
	for st in /proc/"$1"/task/*/stat; do
		[ "$(sed 's/.*) \(.\).*/\1/' "$st" 2>/dev/null)" = T ] || return 1
	done
}

# a server that does not answer (stopped: the kernel still accepts the TCP
# connection, nobody answers the MPA request): timed out, exit 1
kill -STOP "$SPID"
i=0
until all_stopped "$SPID"; do
	i=$((i + 1))
	[ $i -le 100 ] || { kill -CONT "$SPID"; fail "server threads not stopped 10 s after SIGSTOP"; }
	sleep 0.1
done
"$PING" 127.0.0.1 -p "$RPORT" -w 1 >"$TMP/stopped.out" 2>&1
rc=$?
kill -CONT "$SPID"
cat "$TMP/stopped.out"
[ $rc -eq 1 ] || fail "stopped server: exit status $rc, want 1"
grep -q "timed out connecting" "$TMP/stopped.out" || fail "no 'timed out connecting'"
"$PING" 127.0.0.1 -p "$RPORT" -c 1 >/dev/null 2>&1 || fail "server does not answer after SIGCONT"

# bad usage: 2
"$PING" >/dev/null 2>&1
[ $? -eq 2 ] || fail "usage error must exit 2"

# server gone: connection refused, exit 1
perf_server_stop || fail "server exit status $?"
"$PING" 127.0.0.1 -p "$RPORT" -w 2 >"$TMP/refused.out" 2>&1
rc=$?
cat "$TMP/refused.out"
[ $rc -eq 1 ] || fail "refused: exit status $rc, want 1"
grep -q "connection refused" "$TMP/refused.out" || fail "no 'connection refused'"
echo ok
