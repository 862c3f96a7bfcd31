#!/bin/bash
# SPDX-License-Identifier: MIT
# Version Two figures (issue 15), rpcrdma-perf --rdma-version 2 against
# Version One in the same run, alternating, server and client pinned to
# different CPUs:
#   1. NULL: calls/s at 16 in flight and p50 at 1 in flight, v2 vs v1
#      (one Version Two capable server; the target is v2 within 5%).
#   2. ECHO 16 KiB: Version Two with 64 KiB inline thresholds raised by
#      transport properties (both sides send no RFC 8797 private data, so
#      the properties are what raises them) vs Version One, where 16 KiB
#      is a Long Call answered by Reply chunk. Calls/s at 16 in flight and
#      p50 at 1 in flight; the ratio v2/v1.
# usage: bench/rpc/v2.sh [--build DIR] [--reps N] [--duration S]
#        [--server-cpu N --client-cpu N]
set -eu
build=${BUILD:-build} reps=5 dur=2 scpu="" ccpu=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--duration) dur=$2; shift 2 ;;
	--server-cpu) scpu=$2; shift 2 ;;
	--client-cpu) ccpu=$2; shift 2 ;;
	-h|--help) sed -n '3,16p' "$0"; exit 0 ;;
	*) echo "v2.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
perf=$build/tools/perf/rpcrdma-perf
[ -x "$perf" ] || { echo "v2.sh: no $perf (build first)" >&2; exit 2; }
cpus=($(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | while IFS=- read a b; do seq "$a" "${b:-$a}"; done))
[ -n "$scpu" ] || scpu=${cpus[0]}
[ -n "$ccpu" ] || ccpu=${cpus[1]:-${cpus[0]}}
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

# start_server NAME ARGS...: a server on free ports; sets port_NAME
start_server() {
	local name=$1; shift
	"$perf" server --port 0 --no-tcp --cpu "$scpu" "$@" >"$out/$name.log" 2>&1 &
	for _ in $(seq 100); do grep -q "rdma port" "$out/$name.log" && break; sleep 0.1; done
	eval "port_$name=$(sed -n 's/.*rdma port \([0-9]*\).*/\1/p' "$out/$name.log" | head -1)"
}

# one PORT INFLIGHT ARGS...: prints "ops_per_s p50_us" of one client run
one() {
	local port=$1 q=$2; shift 2
	rm -f "$out/r.csv"
	"$perf" client 127.0.0.1 --port "$port" --cpu "$ccpu" --peer rdma --no-progress \
		--inflight "$q" --duration "$dur" --csv "$out/r.csv" "$@" >"$out/c.log" 2>&1 ||
		{ cat "$out/c.log" >&2; echo "0 0"; return; }
	tail -1 "$out/r.csv" | awk -F, '{print $9, $11}'
}

# compare TITLE PORT1 ARGS1 -- PORT2 ARGS2 : alternating reps, medians, ratio
compare() {
	local title=$1 p1=$2 a1=$3 p2=$4 a2=$5
	local r1=() r2=() l1=() l2=()
	for rep in $(seq "$reps"); do
		read -r x _ <<<"$(one "$p1" 16 $a1)"; r1+=("$x")
		read -r _ y <<<"$(one "$p1" 1 $a1)"; l1+=("$y")
		read -r x _ <<<"$(one "$p2" 16 $a2)"; r2+=("$x")
		read -r _ y <<<"$(one "$p2" 1 $a2)"; l2+=("$y")
	done
	med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
	local m1 m2 q1 q2
	m1=$(med "${r1[@]}"); m2=$(med "${r2[@]}"); q1=$(med "${l1[@]}"); q2=$(med "${l2[@]}")
	printf '%s (median of %d alternating runs)\n' "$title" "$reps"
	printf '  %-34s %12.0f calls/s   p50 %7.2f us\n' "v1" "$m1" "$q1"
	printf '  %-34s %12.0f calls/s   p50 %7.2f us\n' "v2" "$m2" "$q2"
	awk -v a="$m1" -v b="$m2" -v c="$q1" -v d="$q2" \
		'BEGIN { printf "  v2/v1: rate %.3f, p50 %.3f\n", (a > 0 ? b / a : 0), (c > 0 ? d / c : 0) }'
}

start_server null --rdma-version 2
start_server echo --rdma-version 2 --inline 65536 --no-private-data
echo "server CPU $scpu, client CPU $ccpu, $dur s per run"
compare "NULL, one Version Two capable server (target: v2 within 5% of v1)" \
	"$port_null" "--workload null --rdma-version 1" \
	"$port_null" "--workload null --rdma-version 2"
compare "ECHO 16 KiB: v1 with chunks vs v2 with 64 KiB thresholds from transport properties" \
	"$port_echo" "--workload echo --size 16K --rdma-version 1" \
	"$port_echo" "--workload echo --size 16K --rdma-version 2 --inline 65536 --no-private-data"
