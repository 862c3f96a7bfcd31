#!/bin/sh
# The scale figures of issue 20, printed next to their targets: server RSS
# per idle connection (1, 1000, 4000 and 10,000 connections to one
# rpcrdma-perf server), the time to connect them, NULL round trip with one
# connection against the same with 10,000 idle ones held, and server RSS
# before and after bursts of connections that have closed; a rogue
# client's effect on a good one's p99 (test_xprt_rogue).
#
# usage: scripts/robustness.sh [BUILD_DIR] [--short] [--check]
#        scripts/robustness.sh [BUILD_DIR] --memory [N]
#   BUILD_DIR  default ./build (needs tools/perf/rpcrdma-perf)
#   --short    the CI version: 1 and 1,000 connections, 3 bursts of 300,
#              no NULL timing, one rogue run (ctest test_scale runs it
#              with --check)
#   --check    exit 1 when a figure misses its target by more than the
#              margin below (a loaded machine, allocator noise); without it
#              the figures are only printed
#   --memory   only issue 38's figure: server RSS at a warm start, with N
#              (default 10,000) connections that each made a NULL call
#              and one 1 MiB WRITE, and once they closed, with the ratio
#              (target <= 1.2; with --check, exit 1 beyond it)
# Each client process holds at most PER_CLIENT connections: a connection
# costs the client a few descriptors (socket, eventfds, epoll) and one
# process may open 20,000 here, so 10,000 connections take several clients.
set -u

BUILD=./build
SHORT=0
CHECK=0
MEMORY=0
MEM_N=10000
for a in "$@"; do
	case "$a" in
	--short) SHORT=1 ;;
	--check) CHECK=1 ;;
	--memory) MEMORY=1 ;;
	-h | --help)
		sed -n '2,22p' "$0"
		exit 0
		;;
	[0-9]*) MEM_N=$a ;;
	*) BUILD=$a ;;
	esac
done
PERF=$BUILD/tools/perf/rpcrdma-perf
[ -x "$PERF" ] || { echo "robustness.sh: no $PERF (build first)"; exit 2; }
# the server and the clients raise their soft limit themselves; the shell's
# only matters for what it passes on
ulimit -n "$(ulimit -Hn)" 2>/dev/null

# Targets (issue 20) and the margins --check allows on a shared machine.
T_CONN_KB=32       # server RSS per idle connection, default options
T_RETURN_PCT=20    # RSS after bursts closed, within this of before
T_FLAT_PCT=20      # NULL round trip, 10,000 idle connections held vs 1
M_CONN_KB=48       # --check: RSS per idle connection at most this
M_RETURN_PCT=35    # --check: RSS after bursts at most this above before,
M_RETURN_KB=4096   # or this many kB (an idle server is ~3.5 MB: a few
                   # allocator pages are already 35% of it; before the
                   # changes of issue 20 the growth was ~580 MB)
PER_CLIENT=2500

TMP=$(mktemp -d)
SPID=
CPIDS=
cleanup() {
	for p in $CPIDS; do kill "$p" 2>/dev/null; done
	[ -n "$SPID" ] && kill -TERM "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
MISSED=0
FAILED=0

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SPID/status"; }
# RSS once the server has let go of closed connections: it reaps them on
# its next ticks and trims the heap then; wait until two samples a
# second apart agree (at most 30 s)
rss_settled() {
	prev=$(rss)
	for j in $(seq 1 30); do
		sleep 1
		cur=$(rss)
		[ "$cur" = "$prev" ] && break
		prev=$cur
	done
	echo "$cur"
}
now_ms() { date +%s%3N; }

"$PERF" server --port 0 --no-tcp >"$TMP/server.log" 2>&1 &
SPID=$!
i=0
while ! grep -q "rdma port [0-9]" "$TMP/server.log"; do
	i=$((i + 1))
	[ $i -gt 300 ] && { echo "server did not start"; cat "$TMP/server.log"; exit 2; }
	sleep 0.1
done
RPORT=$(sed -n 's/.* rdma port \([0-9]*\).*/\1/p' "$TMP/server.log")
C="$PERF client 127.0.0.1 --port $RPORT --no-progress"

# Hold @1 connections in ceil(@1 / PER_CLIENT) client processes, started
# one after another (each once the one before holds its connections: four
# clients connecting at once leave the server with more memory touched in
# the storm, 32-34 kB per connection at 10,000 against 29 one by one; what
# is measured is what an idle connection costs); the wall time it took
# goes to $TMP/ms. Sets CPIDS.
hold() {
	left=$1
	k=0
	CPIDS=
	t0=$(now_ms)
	j=0
	# (sh has no local variables: names apart from the callers' n)
	while [ "$left" -gt 0 ]; do
		m=$left
		[ "$m" -gt $PER_CLIENT ] && m=$PER_CLIENT
		$C --connections "$m" --hold 600 >"$TMP/hold$k.log" 2>&1 &
		CPIDS="$CPIDS $!"
		left=$((left - m))
		k=$((k + 1))
		while [ "$(cat "$TMP"/hold*.log 2>/dev/null | grep -c '^holding')" -lt $k ]; do
			j=$((j + 1))
			for p in $CPIDS; do
				kill -0 "$p" 2>/dev/null && continue
				echo "a client failed:" >&2
				cat "$TMP"/hold*.log >&2
				return 1
			done
			[ $j -gt 3000 ] && { echo "clients did not connect in 300 s" >&2; return 1; }
			sleep 0.1
		done
	done
	echo $(($(now_ms) - t0)) >"$TMP/ms"
}

unhold() {
	for p in $CPIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	CPIDS=
	rm -f "$TMP"/hold*.log
	# until the server has closed them all (a loaded machine takes a
	# while for thousands), then its next tick reaps them
	j=0
	while [ "$(ss -Htn state established "( sport = :$RPORT )" 2>/dev/null | wc -l)" -gt 0 ] &&
		[ $j -lt 600 ]; do
		j=$((j + 1))
		sleep 0.1
	done
	sleep 1
}

# NULL round trip p50 (us) of one connection, from the client's JSON: the
# median of three runs of 20,000 calls (one run moves with the scheduling
# of a 2-core machine)
null_p50() {
	for k in 1 2 3; do
		$C --workload null --count 20000 --warmup 0.2 --json 2>/dev/null |
			sed -n 's/.*"p50_us": \([0-9.]*\).*/\1/p' | head -1
	done | sort -n | sed -n 2p
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", b ? (a - b) * 100 / b : 0 }'; }
verdict() { # @1: 1 when the target is met
	if [ "$1" = 1 ]; then echo "ok"; else MISSED=1; echo "MISSED"; fi
}

# Issue 38: memory returned. A warm start (a server that has served one
# client: NULL calls and 1 MiB WRITEs), then N connections, each with a
# NULL call and a 1 MiB WRITE (a Read chunk the server pulls), held, then
# closed; RSS once the server has closed them all (its descriptors back
# to the warm count) and settled (idle staging buffers go and the heap
# and shared receive buffers are trimmed a second after the last pull or
# close).
if [ $MEMORY = 1 ]; then
	fd0=$(ls "/proc/$SPID/fd" | wc -l)
	$C --workload null --count 2000 >/dev/null 2>&1 &&
		$C --workload write --size 1M --count 20 >/dev/null 2>&1 ||
		{ echo "warm-up client failed"; exit 1; }
	sleep 2
	warm=$(rss_settled)
	C="$C --workload write --size 1M"
	# 1 MiB WRITEs at once from one client: 1,000 finish within its
	# timeout on a loaded 2-core machine, 2,500 did not
	PER_CLIENT=1000
	hold "$MEM_N" || exit 1
	held=$(rss)
	ms=$(cat "$TMP/ms")
	unhold
	j=0
	while [ "$(ls "/proc/$SPID/fd" | wc -l)" -gt "$fd0" ] && [ $j -lt 1200 ]; do
		j=$((j + 1))
		sleep 0.1
	done
	sleep 2
	after=$(rss_settled)
	ratio=$(awk -v a="$after" -v w="$warm" 'BEGIN { printf "%.2f", a / w }')
	ok=$(awk -v r="$ratio" 'BEGIN { print r <= 1.2 ? 1 : 0 }')
	printf "%-46s %11s kB\n" "server RSS, warm start" "$warm"
	printf "%-46s %11s kB %14s\n" "  with $MEM_N connections (NULL + 1 MiB WRITE each)" "$held" "($ms ms)"
	printf "%-46s %11s kB\n" "  once they closed" "$after"
	printf "%-46s %12sx %12s %s\n" "RSS after they closed / warm start" "$ratio" "<= 1.2" \
		"$(verdict "$ok")"
	[ $CHECK = 1 ] && [ "$ok" != 1 ] && exit 1
	exit 0
fi

R0=$(rss)
echo "server pid $SPID, RSS with no connection: $R0 kB"
printf "%-46s %14s %14s %s\n" "figure" "measured" "target" ""

# one row of the scale table: hold $n connections, then let them go
scale_step() {
	base=$(rss)
	hold "$n" || exit 1
	ms=$(cat "$TMP/ms")
	r=$(rss)
	per=$(awk -v a="$r" -v b="$base" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')
	ok=$(awk -v p="$per" -v t=$T_CONN_KB -v n="$n" 'BEGIN { print (n < 100 || p <= t) ? 1 : 0 }')
	awk -v p="$per" -v t=$M_CONN_KB -v n="$n" 'BEGIN { exit (n < 100 || p <= t) ? 0 : 1 }' ||
		FAILED=1
	if [ "$n" = 1 ]; then
		printf "%-46s %11s kB\n" "RSS of the first connection (one-time costs)" "$per"
	else
		printf "%-46s %11s kB %11s kB %s\n" "RSS per idle connection, $n connections" \
			"$per" "<= $T_CONN_KB" "$(verdict "$ok")"
	fi
	printf "%-46s %11s ms %14s\n" "  connect + 1 NULL each, all $n" "$ms" ""
	# the cost of a call with $n connections held: NULL round trip on
	# one more connection (the full run; the short one skips timings)
	if [ $SHORT = 0 ]; then
		l=$(null_p50)
		printf "%-46s %11s us %14s\n" "  NULL p50 on one more connection" "$l" ""
		[ "$n" = 1 ] && l0=$l
		[ "$n" = 10000 ] && l1=$l
	fi
	unhold
}

# Memory comes back (the issue's case: a server that has served one
# connection, then bursts of connections that close again): RSS after the
# bursts against RSS before them.
if [ $SHORT = 1 ]; then BURST=300; else BURST=1000; fi
n=1
scale_step || exit 1
before=$(rss_settled)
for b in 1 2 3; do
	hold $BURST || exit 1
	unhold
done
after=$(rss_settled)
d=$(pct "$after" "$before")
ok=$(awk -v d="$d" -v t=$T_RETURN_PCT 'BEGIN { print d <= t ? 1 : 0 }')
awk -v d="$d" -v t=$M_RETURN_PCT -v a="$after" -v b="$before" -v k=$M_RETURN_KB \
	'BEGIN { exit (d <= t || a - b <= k) ? 0 : 1 }' || FAILED=1
printf "%-46s %12s%% %12s%% %s\n" "RSS after 3 bursts of $BURST closed vs before" "$d" \
	"<= +$T_RETURN_PCT" "$(verdict "$ok")"
echo "  before $before kB, after $after kB"

if [ $SHORT = 1 ]; then COUNTS="1000"; else COUNTS="1000 4000 10000"; fi
for n in $COUNTS; do
	scale_step || exit 1
done

if [ $SHORT = 0 ] && [ -n "${l1:-}" ] && [ -n "${l0:-}" ]; then
	d=$(pct "$l1" "$l0")
	ok=$(awk -v d="$d" -v t=$T_FLAT_PCT 'BEGIN { print (d <= t && d >= -t) ? 1 : 0 }')
	printf "%-46s %12s%% %12s%% %s\n" "NULL p50 with 10,000 held vs 1" "$d" \
		"+-$T_FLAT_PCT" "$(verdict "$ok")"
fi

# What the largest step leaves behind once its connections are gone
# (printed only): tables sized for the peak (the device's poll and STag
# tables) and the shared receive buffers that took messages at the peak
# (they stay posted: a receive queue cannot take a buffer back).
late=$(rss_settled)
printf "%-46s %12s%% %14s\n" "RSS once the largest step closed, vs before" "$(pct "$late" "$before")" ""
echo "  before $before kB, after $late kB"

# A rogue client (tests/xprt/test_xprt_rogue.c): its device never answers
# the server's RDMA Reads while it floods Long Calls with 4 MiB and 12 MiB
# Read chunks; a good client's 256 KiB WRITEs go on. Target: their p99
# moves less than 2x. Printed only (one short run on a shared machine is
# noisy; the test itself checks that no good call waits a second). The
# full run takes the median of three runs (each p99 is of a few hundred
# calls: one late scheduling of a 2-core machine moves it).
ROGUE=$BUILD/tests/xprt/test_xprt_rogue
if [ -x "$ROGUE" ]; then
	if [ $SHORT = 1 ]; then RUNS=1; else RUNS=3; fi
	xs=
	for k in $(seq 1 $RUNS); do
		line=$("$ROGUE" 2>&1 | grep '^good client:')
		echo "  run $k: $line"
		xs="$xs $(echo "$line" | sed -n 's/.*(x\([0-9.]*\)).*/\1/p')"
	done
	x=$(echo $xs | tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	ok=$(awk -v x="${x:-99}" 'BEGIN { print x < 2 ? 1 : 0 }')
	printf "%-46s %12sx %12s %s\n" "good client p99, rogue vs none (median)" "${x:-?}" "< 2x" \
		"$(verdict "$ok")"
else
	echo "rogue client: no $ROGUE (a test build: -DRPCRDMA_BUILD_TESTS=ON)"
fi

[ $MISSED = 1 ] && echo "MISSED: a target (--check allows $M_CONN_KB kB per connection, +$M_RETURN_PCT% or +$M_RETURN_KB kB after bursts)"
[ $CHECK = 1 ] && [ $FAILED = 1 ] && exit 1
exit 0
