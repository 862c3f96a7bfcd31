#!/bin/sh
# NULL calls over many connections (issue 38, "Scale"): rpcrdma-perf's
# NULL call rate and latency with 1, 10, 100 and 1,000 RPC-over-RDMA
# connections (softiwarp, loopback), one call in flight on each, against
# a server with 0, 1 and 2 RDMA worker threads; and what each call cost in
# CPU time and context switches on either side. README.md in this folder
# ("Scale") says what the figures mean and models them for 64 cores.
#
#   bench/rpc/scale.sh [--quick] [--build DIR] [--out DIR]
#                      [--connections LIST] [--server-threads LIST]
#                      [--duration S] [--warmup S]
#                      [--placement cross|same|none | --server-cpu N --client-cpu N]
#                      [--nice N]
#
# LISTs are comma-separated (defaults 1,10,100,1000 and 0,1,2). The
# placement is bench/rpc/run.sh's: by default the whole server on the
# first allowed CPU, the client on the second. --quick: 1 s per point
# after 0.3 s of warm-up (default 3 s after 0.5 s). Needs a cmake build
# (default build/, or BUILD=dir / --build dir) with tools/perf/rpcrdma-perf.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
# shellcheck source=bench/rpc/lib.sh
. "$root/bench/rpc/lib.sh"
conns=1,10,100,1000 sthreads=0,1,2 D=3 W=0.5 placement=cross scpu= ccpu= out= nice=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) D=1 W=0.3 ;;
	--build | --out | --placement | --server-cpu | --client-cpu | --nice) bench_opt "$1" "$2"; shift ;;
	--connections) conns=$2; shift ;;
	--server-threads) sthreads=$2; shift ;;
	--duration) D=$2; shift ;;
	--warmup) W=$2; shift ;;
	-h|--help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "scale.sh: unknown option $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done
bench_need_perf scale.sh
out=${out:-$(mktemp -d /tmp/rpcrdma-bench-scale.XXXXXX)}
mkdir -p "$out"

# CPU placement, as in run.sh
bench_placement scale.sh

spid=
trap bench_stop_server EXIT INT TERM

res=$out/scale.csv
: >"$res"
failures=0
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== bench/rpc/scale.sh: $(date -u +%FT%TZ), ${D} s per point after ${W} s warm-up" >&2
for t in $(echo "$sthreads" | tr ',' ' '); do
	slog=$out/server-t$t.log
	# one server per worker count; no TCP servers (RDMA only)
	$pre "$perf" server --port 0 --no-tcp --threads "$t" $sarg >"$slog" 2>&1 &
	spid=$!
	bench_wait_server scale.sh "$slog"
	port=$(sed -n 's/.* rdma port \([0-9]*\).*/\1/p' "$slog" | head -1)
	for n in $(echo "$conns" | tr ',' ' '); do
		tag=t$t-c$n
		echo "  server workers $t, $n connection(s): rpcrdma-perf client --workload null --threads $n --inflight 1" >&2
		if ! timeout 600 $pre "$perf" client 127.0.0.1 --port "$port" $carg --peer rdma \
			--workload null --threads "$n" --inflight 1 --duration "$D" --warmup "$W" \
			--no-progress --csv "$out/$tag.csv" >"$out/$tag.txt" 2>&1; then
			echo "scale.sh: point $tag FAILED (output in $out/$tag.txt)" >&2
			failures=$((failures + 1))
			continue
		fi
		[ -s "$res" ] || head -1 "$out/$tag.csv" | sed 's/^/server_workers,/' >"$res"
		tail -n +2 "$out/$tag.csv" | sed "s/^/$t,/" >>"$res"
	done
	bench_stop_server
done

echo
echo "rpcrdma-perf NULL calls, one in flight per connection (softiwarp, MPA CRC off, loopback)"
bench_machine
echo "placement: server CPU ${scpu:-unpinned} (all its threads), client CPU ${ccpu:-unpinned}; ${D} s per point"
echo "load average at start: $load0, at end: $(cut -d' ' -f1-3 /proc/loadavg); per-point output in $out"
echo
[ -s "$res" ] && awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{
	if (!hdr++) {
		printf "%7s %6s %10s %9s %9s %10s | %-22s %8s | %-22s %8s\n", "workers", "conns",
		    "calls/s", "p50 us", "p99 us", "p99.9 us", "server CPU us/call", "csw/call",
		    "client CPU us/call", "csw/call"
		printf "%7s %6s %10s %9s %9s %10s | %7s %7s %6s %8s | %7s %7s %6s %8s\n", "", "",
		    "", "", "", "", "user", "sys", "total", "", "user", "sys", "total", ""
	}
	su = $c["srv_user_us"]; ss = $c["srv_sys_us"]; cu = $c["cli_user_us"]; cs = $c["cli_sys_us"]
	printf "%7d %6d %10.0f %9.1f %9.1f %10.1f | %7.2f %7.2f %6.2f %8.2f | %7.2f %7.2f %6.2f %8.2f%s\n",
	    $1, $c["threads"], $c["ops_per_s"], $c["p50_us"], $c["p99_us"], $c["p999_us"],
	    su, ss, su + ss, $c["srv_csw"], cu, cs, cu + cs, $c["cli_csw"],
	    ($c["errors"] + 0 || $c["bad_data"] + 0) ? "  ERRORS" : ""
}' "$res"
echo
echo "CSV: $res"
[ $failures -eq 0 ] || { echo "$failures point(s) failed" >&2; exit 1; }
