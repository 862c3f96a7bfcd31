#!/usr/bin/env bash
# The soak of issue 20: one rpcrdma-perf server under a moderate, mixed load
# for a long time, its memory and descriptors sampled each minute.
#
#   scripts/soak.sh [--minutes N] [--interval S] [--cpu-share PCT] [--out DIR] [--srq] [BUILD]
#   scripts/soak.sh --report DIR
#
#   --minutes N      how long (default 60)
#   --interval S     seconds between samples (default 60)
#   --cpu-share PCT  CPU the load may take, server and clients together, in
#                    percent of one core (default 30): after each step the
#                    loop sleeps until its average is back under it
#   --out DIR        where soak.csv, soak.png and the logs go
#                    (default BUILD/soak-<UTC time>)
#   --srq            a server without reliable replies, so that it takes its
#                    receives from the shared receive queue (a server with
#                    reliable replies keeps a pool per connection); the
#                    unknown-size step becomes echoes of 100 B to 70 KiB
#   BUILD            a build directory with tools/perf/rpcrdma-perf and
#                    tools/ping/rpcrdma-ping (default ./build; a Release or
#                    RelWithDebInfo build: the figures are about the library)
#   --report DIR     no run: the trend, verdict and plot of DIR/soak.csv again
#
# The load, round and round: rpcrdma-perf clients that connect, make calls
# and exit (inline NULL and echo calls, WRITEs by Read chunk, READs by Write
# chunk, echoes by Long Call + Reply chunk, replies of unknown size by Reply
# chunk or responder-provided Read chunk), bursts of connections that open
# and close, clients killed with SIGKILL in the middle of 1 MiB WRITEs, and
# two long-lived clients: rpcrdma-ping (a NULL call every 0.2 s on one
# connection) and a client holding 16 idle connections. Where `ss -K` can
# destroy sockets (root, INET_DIAG_DESTROY), the ping's connection is also
# cut under it once per round: its transport reconnects.
#
# Each sample (taken between steps, when only the long-lived clients are
# connected) goes to soak.csv: RSS (kB) and open descriptors of the server,
# the ping and the holder, and the load's counts so far. At the end: the
# least-squares trend of each column per hour over the samples after the
# first tenth of the run (warm-up: pools and allocator arenas filling), and
# a verdict: "growth" when the fitted growth over that span is more than 5%
# of the column's mean (1 MiB at least) for RSS, more than one for fd
# counts, and also more than twice the standard error of the fit (sample
# noise: RSS moves by a few MB with what the allocator holds at that
# moment), else "no growth trend". Exit status 1 when a verdict is
# "growth", a load step failed or a long-lived client died; gnuplot
# (gnuplot-nox) draws soak.png when it is installed.
set -uo pipefail

MINUTES=60
INTERVAL=60
SHARE=30
OUT=
REPORT=
SRQ=0
BUILD=./build
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) MINUTES=$2; shift 2 ;;
	--interval) INTERVAL=$2; shift 2 ;;
	--cpu-share) SHARE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--srq) SRQ=1; shift ;;
	--report) REPORT=$2; shift 2 ;;
	-h | --help) sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
	*) BUILD=$1; shift ;;
	esac
done
# The trend and verdict of DIR/soak.csv (@1) and its plot; 1 for growth.
report() {
	local dir=$1 csv=$1/soak.csv secs steps kills cuts VERDICT VRC
	[ -s "$csv" ] || { echo "soak.sh: no $csv" >&2; return 2; }
	secs=$(awk -F, 'NR > 1 { t = $2 } END { print int(t / 60 + 0.5) * 60 }' "$csv")
	IFS=, read -r _ _ _ _ _ _ _ _ steps _ kills cuts _ < <(tail -1 "$csv")
	# Least-squares trend per hour of each column, over the samples after the
	# first tenth of the run.
	VERDICT=$(awk -F, -v skip=$((secs / 10)) '
	NR == 1 { for (i = 1; i <= NF; i++) name[i] = $i; next }
	$2 >= skip {
		n++
		x[n] = $2 / 3600
		for (c = 3; c <= 8; c++) {
			y[c, n] = $c
			if (n == 1) first[c] = $c
			last[c] = $c
		}
	}
	END {
		if (n < 3) { print "too few samples for a trend (" n ")"; exit 3 }
		for (i = 1; i <= n; i++) mx += x[i] / n
		for (i = 1; i <= n; i++) sxx += (x[i] - mx) ^ 2
		span = x[n] - x[1]
		bad = 0
		printf "%-14s %8s %8s %9s %11s %10s %9s  %s\n", "column", "first", "last", "mean", "trend/hour", "over run", "+-2 s.e.", "verdict"
		for (c = 3; c <= 8; c++) {
			my = 0; sxy = 0; rss = 0
			for (i = 1; i <= n; i++) my += y[c, i] / n
			for (i = 1; i <= n; i++) sxy += (x[i] - mx) * (y[c, i] - my)
			b = sxy / sxx
			for (i = 1; i <= n; i++) rss += (y[c, i] - my - b * (x[i] - mx)) ^ 2
			se = sqrt(rss / (n - 2) / sxx)
			g = b * span
			if (name[c] ~ /rss/) { lim = my * 0.05; if (lim < 1024) lim = 1024 } else lim = 1
			# growth: larger than the limit and than the noise of the fit
			ok = !(g > lim && g > 2 * se * span)
			if (!ok) bad = 1
			printf "%-14s %8d %8d %9.0f %+11.1f %+10.1f %9.1f  %s\n", name[c], first[c], last[c], my, b, g, 2 * se * span, ok ? "no growth trend" : "GROWTH"
		}
		exit bad
	}' "$csv")
	VRC=$?
	printf "soak: trend over the samples from %d s on (least squares):\n" $((secs / 10))
	echo "$VERDICT"

	if command -v gnuplot >/dev/null; then
		gnuplot <<-EOF 2>"$dir/gnuplot.log"
	set terminal pngcairo size 860,400 font ",9"
	set output "$dir/soak.png"
	set datafile separator ","
	set key outside right top vertical
	set xlabel "minutes"
	set ylabel "RSS (MB)"
	set y2label "open descriptors"
	set ytics nomirror
	set y2tics
	set yrange [0:*]
	set y2range [0:*]
	set title "rpcrdma soak: $((secs / 60)) min, $steps load steps, $kills clients killed mid-call, $cuts connections cut"
	plot "$csv" using 1:(\$3/1024) every ::1 with linespoints pt 7 ps 0.5 title "server RSS", \
	     "$csv" using 1:(\$5/1024) every ::1 with lines title "ping RSS", \
	     "$csv" using 1:(\$7/1024) every ::1 with lines title "holder RSS", \
	     "$csv" using 1:4 every ::1 axes x1y2 with steps dt 2 lw 2 title "server fds", \
	     "$csv" using 1:8 every ::1 axes x1y2 with steps dt 3 lw 2 title "holder fds"
		EOF
		[ -s "$dir/soak.png" ] && echo "soak: plot $dir/soak.png" ||
			echo "soak: gnuplot failed ($dir/gnuplot.log)"
	else
		echo "soak: no gnuplot (apt-get install gnuplot-nox): no plot"
	fi
	echo "soak: csv $csv"
	return $((VRC != 0))
}

if [ -n "$REPORT" ]; then
	report "$REPORT"
	exit $?
fi

PERF=$BUILD/tools/perf/rpcrdma-perf
PING=$BUILD/tools/ping/rpcrdma-ping
for b in "$PERF" "$PING"; do
	[ -x "$b" ] || { echo "soak.sh: no $b (build it first)" >&2; exit 2; }
done
[ -n "$OUT" ] || OUT=$BUILD/soak-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT" || exit 2
CSV=$OUT/soak.csv
TICK=$(getconf CLK_TCK)

SPID=
PINGPID=
HOLDPID=
KPID=
cleanup() {
	[ -n "$KPID" ] && kill -KILL "$KPID" 2>/dev/null
	for p in $HOLDPID $PINGPID; do kill -INT "$p" 2>/dev/null; done
	for p in $HOLDPID $PINGPID; do wait "$p" 2>/dev/null; done
	if [ -n "$SPID" ]; then
		kill -TERM "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# CPU ticks of @1, and with @2 = c those of its waited-for children
ticks() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null |
		awk -v c="${2:-}" '{ print $12 + $13 + (c == "c" ? $14 + $15 : 0) }'
}
now() { date +%s.%N; }


if [ $SRQ = 1 ]; then RR=; else RR=--reliable-reply; fi
# shellcheck disable=SC2086 # RR: one option or none
"$PERF" server --port 0 --no-tcp $RR >"$OUT/server.log" 2>&1 &
SPID=$!
# wait_log FILE PATTERN WHAT: until FILE has a line matching PATTERN (30 s)
wait_log() {
	local i=0
	while ! grep -q "$2" "$1"; do
		i=$((i + 1))
		[ $i -gt 300 ] && { echo "soak.sh: $3" >&2; cat "$1" >&2; exit 2; }
		sleep 0.1
	done
}
wait_log "$OUT/server.log" "rdma port [0-9]" "server did not start"
PORT=$(sed -n 's/.* rdma port \([0-9]*\).*/\1/p' "$OUT/server.log")
C=("$PERF" client 127.0.0.1 --port "$PORT" --no-progress --peer rdma)

SECS=$((MINUTES * 60))
"$PING" 127.0.0.1 -p "$PORT" -c 0 -i 0.2 -w 5 -q >"$OUT/ping.log" 2>&1 &
PINGPID=$!
"${C[@]}" --connections 16 --hold $((SECS + 120)) >"$OUT/holder.log" 2>&1 &
HOLDPID=$!
wait_log "$OUT/holder.log" '^holding' "holder did not connect"

# ss -K needs the kernel's socket destroy (INET_DIAG_DESTROY) and root;
# cut_ping counts only the cuts after which the socket is gone
CUT=0
command -v ss >/dev/null && [ "$(id -u)" = 0 ] && CUT=1

# One step of the load: a client run that must succeed (its output is kept
# when it fails).
STEPS=0
FAILS=0
KILLS=0
CUTS=0
step() {
	STEPS=$((STEPS + 1))
	if ! "${C[@]}" "$@" >"$OUT/step.log" 2>&1; then
		FAILS=$((FAILS + 1))
		{ echo "== step $STEPS failed at $(date -u +%T): $*"; cat "$OUT/step.log"; } >>"$OUT/failures.log"
	fi
}
# A 1 MiB WRITE client killed after @1 seconds, in the middle of its calls.
killed() {
	"${C[@]}" --workload write --size 1M --inflight 4 --duration 30 --warmup 0 \
		>/dev/null 2>&1 &
	KPID=$!
	sleep "$1"
	kill -KILL "$KPID" 2>/dev/null
	wait "$KPID" 2>/dev/null
	KPID=
	KILLS=$((KILLS + 1))
}
# The ping's connection (its TCP socket's source port is the ping's): cut
# with ss -K; the ping's next call reconnects.
cut_ping() {
	[ $CUT = 1 ] || return 0
	local lp
	lp=$(ss -Htnp state established "( dport = :$PORT )" 2>/dev/null |
		awk -v p="pid=$PINGPID," 'index($0, p) { n = split($3, a, ":"); print a[n]; exit }')
	[ -n "$lp" ] || return 0
	ss -K -tn state established "( dport = :$PORT and sport = :$lp )" >/dev/null 2>&1
	if ss -Htn state established "( dport = :$PORT and sport = :$lp )" 2>/dev/null | grep -q .; then
		CUT=0
		echo "soak: ss -K did not cut the ping's connection: no more cuts" >&2
	else
		CUTS=$((CUTS + 1))
	fi
}

T0=$(now)
LOADPID=$BASHPID
CPU0=$(($(ticks "$SPID") + $(ticks "$LOADPID" c)))
NEXT=0
N=0
echo "min,t_s,server_rss_kb,server_fds,ping_rss_kb,ping_fds,holder_rss_kb,holder_fds,steps,failed,killed,cuts,cpu_pct" >"$CSV"
sample() {
	local t cpu pct
	t=$(awk -v a="$(now)" -v b="$T0" 'BEGIN { printf "%.0f", a - b }')
	cpu=$(($(ticks "$SPID") + $(ticks "$LOADPID" c) - CPU0))
	pct=$(awk -v c="$cpu" -v k="$TICK" -v t="$t" 'BEGIN { printf "%.1f", (t > 0 ? c * 100 / k / t : 0) }')
	echo "$(awk -v t="$t" 'BEGIN { printf "%.2f", t / 60 }'),$t,$(rss "$SPID"),$(fds "$SPID"),$(rss "$PINGPID"),$(fds "$PINGPID"),$(rss "$HOLDPID"),$(fds "$HOLDPID"),$STEPS,$FAILS,$KILLS,$CUTS,$pct" >>"$CSV"
	N=$((N + 1))
	NEXT=$((N * INTERVAL))
}
# Sleep until the load's CPU (server + clients since T0) is back under SHARE.
throttle() {
	local el cpu need
	el=$(awk -v a="$(now)" -v b="$T0" 'BEGIN { print a - b }')
	cpu=$(($(ticks "$SPID") + $(ticks "$LOADPID" c) - CPU0))
	need=$(awk -v c="$cpu" -v k="$TICK" -v s="$SHARE" -v e="$el" \
		'BEGIN { n = c / k * 100 / s - e; printf "%.2f", (n > 0.2 ? n : 0.2) }')
	sleep "$need"
}
elapsed() { awk -v a="$(now)" -v b="$T0" 'BEGIN { printf "%d", a - b }'; }

echo "soak: server pid $SPID port $PORT, ping pid $PINGPID, holder pid $HOLDPID, $MINUTES min, out $OUT"
[ $CUT = 1 ] || echo "soak: no ss or not root: no connection cuts"
sample
round=0
while [ "$(elapsed)" -lt $SECS ]; do
	round=$((round + 1))
	for s in 1 2 3 4 5 6 7 8 9; do
		case $s in
		1) step --workload null --count 3000 --warmup 0 ;;
		2) step --workload echo --sizes 200,900 --count 500 --warmup 0 ;;
		3) step --workload write --sizes 4K,64K,1M --count 100 --warmup 0 --inflight 4 ;;
		4) step --workload read --sizes 4K,256K,2M --count 60 --warmup 0 --inflight 2 ;;
		5) step --workload echo --sizes 8K,300K --count 60 --warmup 0 ;;
		6) if [ $SRQ = 1 ]; then
			step --workload echo --sizes 100,3K,70K --count 100 --warmup 0
		else
			step --workload unknown --count 100 --warmup 0 --block 25 --seed "$round"
		fi ;;
		7) step --workload write --size 16K --connections 40 ;;
		8) killed "0.$((RANDOM % 9 + 1))" ;;
		9) cut_ping ;;
		esac
		kill -0 "$PINGPID" 2>/dev/null || { echo "soak: the ping client died" >&2; exit 1; }
		kill -0 "$HOLDPID" 2>/dev/null || { echo "soak: the holder died" >&2; exit 1; }
		kill -0 "$SPID" 2>/dev/null || { echo "soak: the server died" >&2; exit 1; }
		throttle
		if [ "$(elapsed)" -ge $NEXT ]; then
			# the server reaps closed connections on its next tick
			sleep 1
			sample
		fi
		[ "$(elapsed)" -ge $SECS ] && break
	done
done
[ "$(elapsed)" -ge $((NEXT - INTERVAL + 5)) ] && sample

# The server's totals (SIGUSR1 prints its connection table)
kill -USR1 "$SPID"
sleep 1
kill -INT "$PINGPID" 2>/dev/null
wait "$PINGPID" 2>/dev/null
PINGRC=$?
PINGPID=
echo "soak: $N samples, $STEPS steps ($FAILS failed), $KILLS clients killed mid-call, $CUTS connections cut"
echo "soak: server totals: $(grep '^total' "$OUT/server.log" | tail -1)"
echo "soak: ping: $(grep -E 'calls|replies' "$OUT/ping.log" | tail -1) (exit $PINGRC)"
echo "soak: load CPU $(tail -1 "$CSV" | awk -F, '{ print $13 }')% of one core (target <= $SHARE%)"

report "$OUT"
VRC=$?
[ $VRC -ne 0 ] && { echo "soak: VERDICT: growth (or too few samples)"; exit 1; }
[ $FAILS -ne 0 ] && { echo "soak: VERDICT: $FAILS load steps failed ($OUT/failures.log)"; exit 1; }
echo "soak: VERDICT: no growth trend"
exit 0
