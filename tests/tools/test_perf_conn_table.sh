#!/bin/sh
# rpcrdma-perf server's connection table (rpcrdma_svc_conn_foreach): a real
# server with an rpcrdma-ping client calling NULL every 0.1 s. SIGUSR1
# prints the table and the server keeps running: a header, one row for the
# ping's connection (up, 64 credits, calls == replies >= 3, bytes both ways,
# no chunks, no RDMA_ERROR) and a total row with the same calls. SIGTERM
# prints it once more before the server exits 0.
# usage: test_perf_conn_table.sh PERF PING
set -u
PERF=$1
PING=$2
TMP=$(mktemp -d)
. "$(dirname "$0")/server_start.sh"
PPID_PING=
# The ping may be stopped (SIGSTOP below) when a check fails: a stopped
# process leaves SIGTERM pending until continued, so continue it too.
ping_stop() {
	if [ -n "$PPID_PING" ]; then
		kill "$PPID_PING" 2>/dev/null
		kill -CONT "$PPID_PING" 2>/dev/null
		wait "$PPID_PING" 2>/dev/null
		PPID_PING=
	fi
}
trap 'ping_stop; perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; cat "$TMP/server.log"; exit 1; }

perf_server_start
# made before the ping starts: the loop below may read it before the
# backgrounded ping has opened it (a missing file made grep -c print
# nothing, `[` fail and the loop end at once, under load)
: >"$TMP/ping.log"
"$PING" 127.0.0.1 -p "$RPORT" -c 0 -i 0.1 >>"$TMP/ping.log" 2>&1 &
PPID_PING=$!
i=0
while [ "$(grep -c "ready and waiting" "$TMP/ping.log")" -lt 3 ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "ping got no replies: $(cat "$TMP/ping.log")"
	sleep 0.1
done
# The ping is paused while the table is printed, so its calls stay put.
kill -STOP "$PPID_PING"
sleep 0.3
kill -USR1 "$SPID"
i=0
while ! grep -q "^total " "$TMP/server.log"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no table after SIGUSR1"
	sleep 0.1
done
kill -0 "$SPID" || fail "the server exited on SIGUSR1"
cat "$TMP/server.log"
# columns: conn peer state credits calls replies bytes_in bytes_out read
# write reply err_vers err_chunk
awk '
/^conn / { hdr++; if ($2 != "peer" || $5 != "calls" || $13 != "err_chunk") { print "header: " $0; bad = 1 } next }
hdr == 1 && /^[0-9]+ / {
	rows++
	if ($2 !~ /^127\.0\.0\.1:[0-9]+$/ || $3 != "up" || $4 != 64) { print "row: " $0; bad = 1 }
	if ($5 < 3 || $5 != $6) { print "calls/replies: " $0; bad = 1 }
	if ($7 <= 0 || $8 <= 0) { print "bytes: " $0; bad = 1 }
	if ($9 != 0 || $10 != 0 || $11 != 0 || $12 != 0 || $13 != 0) { print "chunks/errors: " $0; bad = 1 }
	calls = $5
}
hdr == 1 && /^total / { if ($5 != calls || $6 != calls) { print "total: " $0; bad = 1 } }
END { if (hdr != 1 || rows != 1) { print hdr " tables, " rows " rows"; bad = 1 } exit bad }
' "$TMP/server.log" || fail "table after SIGUSR1"
ping_stop
perf_server_stop || fail "server exit status $rc"
[ "$(grep -c "^conn " "$TMP/server.log")" -eq 2 ] || fail "no table at exit"
grep "^total " "$TMP/server.log" | tail -1 | awk '$5 < 3 { exit 1 }' || fail "exit total"
echo ok
