#!/bin/sh
# rpcrdma-perf --workload unknown end to end (issue 16's figure, short): a
# real server with reliable replies and client runs over loopback
# (softiwarp), Version Two and Version One. Asserts, not timing: both modes
# made the calls asked for, every payload was checked (a failed check ends
# the run with an error), the rr mode pulled replies from Read chunks and
# registered less than the 1 MiB Reply chunk mode, which registered 1 MiB
# per call; the server exposes nothing once the run is over. Then: a server
# without --reliable-reply fails the rr mode, and a server answering with
# wrong bytes is caught.
# usage: test_perf_unknown.sh PERF
set -u
PERF=$1
TMP=$(mktemp -d)
. "$(dirname "$0")/server_start.sh"
trap 'perf_server_stop; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# check OUT: the two rows and the summary of a good run of 200 calls a mode
check() {
	awk '
	$1 == "rr-read-chunk" { rr = 1; if ($2 != 200) bad = bad " rr calls " $2
		if ($11 + 0 <= 0) bad = bad " nothing pulled"
		if ($9 + 0 >= 1048576 || $9 + 0 <= 0) bad = bad " rr client registered " $9 " per call"
		if ($10 + 0 <= 0) bad = bad " rr server registered nothing" }
	$1 == "reply-chunk-1MiB" { ch = 1; if ($2 != 200) bad = bad " chunk calls " $2
		if ($9 != 1048576) bad = bad " chunk mode registered " $9 " per call, not 1 MiB"
		if ($11 != 0) bad = bad " chunk mode pulled" }
	/^ratio mean/ { ratio = 1; if ($0 !~ /server exposed bytes after the run: 0$/) bad = bad " still exposed" }
	END { if (!rr || !ch || !ratio) bad = bad " rows missing"
		if (bad != "") { print bad; exit 1 } }' "$1" || fail "$1: figures"
}

perf_server_start --reliable-reply --rdma-version 2
C="$PERF client 127.0.0.1 --port $RPORT --workload unknown --count 200 --block 25 --warmup 0"
for v in 2 1; do
	$C --rdma-version $v >"$TMP/v$v.out" 2>&1 || { cat "$TMP/v$v.out"; fail "version $v run"; }
	cat "$TMP/v$v.out"
	check "$TMP/v$v.out"
done
grep -q "Version Two" "$TMP/v2.out" || fail "v2 run not in Version Two"
grep -q "Version One" "$TMP/v1.out" || fail "v1 run not in Version One"
perf_server_stop || fail "server exit status"

# Without reliable replies on the server a large reply with no Reply chunk
# fits nothing: the run must fail, not report figures.
perf_server_start --rdma-version 2
$PERF client 127.0.0.1 --port "$RPORT" --workload unknown --count 200 --block 25 --warmup 0 \
	--rdma-version 2 >"$TMP/norr.out" 2>&1 && { cat "$TMP/norr.out"; fail "ran without reliable replies"; }
cat "$TMP/norr.out"
grep -q "rr-read-chunk: GET of" "$TMP/norr.out" || fail "no error for the rr mode"
perf_server_stop

# Wrong bytes are caught.
perf_server_start --reliable-reply --test-corrupt
$PERF client 127.0.0.1 --port "$RPORT" --workload unknown --count 50 --block 25 --warmup 0 \
	>"$TMP/bad.out" 2>&1 && { cat "$TMP/bad.out"; fail "corrupt payloads passed"; }
cat "$TMP/bad.out"
grep -q "the bytes differ from the pattern" "$TMP/bad.out" || fail "no payload error reported"
perf_server_stop
echo PASS
