#!/bin/sh
# Memory comes back after connections close (issue 38): a real
# rpcrdma-perf server, warmed by one client (NULL calls and 1 MiB WRITEs,
# then gone); its VmRSS once settled is the warm start. Then one client
# opens N connections, each makes a NULL call and one 256 KiB WRITE (Read
# chunk pulled by the server, all at once), and exits. Once the server
# has closed them all (its descriptors are back to the warm count) and
# settled, its VmRSS must be within PCT% (+ SLACK_KB) of the warm start.
# The storm itself must have raised the peak (VmHWM) by at least 10 kB a
# connection, or the test proves nothing. Before the fix the server kept
# up to 16 MB of staging buffers and ~4 MB of touched shared receive
# buffers (1,000 connections: 5.3 MB warm, 22.7 MB after; 256 KiB WRITEs:
# 1,000 of 1 MiB at once from one client may time out under load).
# usage: test_mem_return.sh PERF [N]
set -u
PERF=$1
N=${2:-1000}
PCT=20
SLACK_KB=256
TMP=$(mktemp -d)
. "$(dirname "$0")/server_start.sh"
trap 'perf_server_stop >/dev/null 2>&1; rm -rf "$TMP"' EXIT
fail() {
	echo "FAIL: $*"
	cat "$TMP/server.log" "$TMP/client.log" 2>/dev/null | tail -20
	exit 1
}
ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((N + 200)) ] ||
	{ echo "SKIP: $N connections need $((N + 200)) descriptors, the limit is $(ulimit -n)"; exit 77; }

status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SPID/status"; }
nfds() { ls "/proc/$SPID/fd" | wc -l; }
# VmRSS once the server let go: it unmaps idle staging buffers and trims
# after a second without a pull or a close; then two samples a second
# apart agree (at most 30 s)
settled() {
	sleep 2.5
	prev=$(status VmRSS)
	for j in $(seq 1 30); do
		sleep 1
		cur=$(status VmRSS)
		[ "$cur" = "$prev" ] && break
		prev=$cur
	done
	echo "$cur"
}
# until the server holds no more descriptors than @1 (at most 60 s)
closed_to() {
	j=0
	while [ "$(nfds)" -gt "$1" ]; do
		j=$((j + 1))
		[ $j -gt 600 ] && fail "the server still holds $(nfds) descriptors (warm: $1)"
		sleep 0.1
	done
}

perf_server_start
C="$PERF client 127.0.0.1 --port $RPORT --no-progress --peer rdma"
# the server's descriptors with no connection
sleep 0.5
FD0=$(nfds)
$C --workload null --count 2000 >"$TMP/client.log" 2>&1 || fail "warm-up NULL calls"
$C --workload write --size 1M --count 20 >"$TMP/client.log" 2>&1 || fail "warm-up WRITEs"
closed_to "$FD0"
WARM=$(settled)
HWM0=$(status VmHWM)

$C --connections "$N" --workload write --size 256K >"$TMP/client.log" 2>&1 ||
	fail "$N connections with a 256 KiB WRITE each"
grep -q "server saw $N connections" "$TMP/client.log" || fail "the server did not see $N connections"
closed_to "$FD0"
AFTER=$(settled)
HWM=$(status VmHWM)
LIMIT=$((WARM + WARM * PCT / 100 + SLACK_KB))
echo "server VmRSS: warm start $WARM kB, peak $HWM kB with $N connections (warm peak $HWM0 kB)," \
	"after they closed $AFTER kB ($(awk -v a="$AFTER" -v w="$WARM" 'BEGIN { printf "%.2f", a / w }')x;" \
	"limit $LIMIT kB)"
[ "$HWM" -ge $((WARM + N * 10)) ] ||
	fail "the connections raised the peak by less than 10 kB each: nothing to give back"
[ "$AFTER" -le "$LIMIT" ] || fail "$AFTER kB kept after $N connections closed, more than $PCT% + $SLACK_KB kB over the warm start $WARM kB"
echo "PASS"
