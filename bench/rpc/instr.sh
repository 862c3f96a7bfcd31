#!/bin/bash
# User-space instructions per NULL call (issue 38), reproducible: the work
# of a call, not the waiting. bench/rpc/README.md ("Instructions per call")
# says what is counted; run.sh and tests/bench/test_instr.sh use this.
#
#   bench/rpc/instr.sh [--build DIR] [--calls N1,N2] [--pairs K]
#                      [--server-cpu N] [--client-cpu N] [--side client|server|both]
#                      [--peer rdma|tcp|both] [--nice N]
#
# Prints one line per figure: "SIDE PEER PER_CALL" (SIDE client or server,
# PEER rdma or tcp), the least of K pairs (default 1); each pair's figure on
# stderr. Exit 77 when valgrind is missing, 1 when a run failed.
#
# Method: the counted process runs under valgrind --tool=callgrind (user
# space instructions, all its threads), the other side natively. Both
# sides use progress that never busy-polls (rpcrdma-perf --no-spin:
# RPCRDMA_PROGRESS_BLOCK; RPCRDMA_SIW_RX_SPIN_US=0: no receive spin in
# the provider), so a wait is one blocking system call, not a number of
# polls that depends on how fast the peer answers. Left out with
# --toggle-collect: the periodic ticks of the client and the server loop
# (lead_tick, loop_tick: work of the clock, whose share per call grows with
# the slowdown under valgrind) and, for a libtirpc figure, the RDMA progress
# thread of the same server process (progress_main: idle there); and the
# rest of a loop iteration whose blocking wait timed out with nothing
# (lead_waited, evloop_waited_*: the peer was quiet for 20 ms, the
# machine's load decides how often). Two runs
# of N1 and N2 calls (one in flight) are subtracted and divided by N2 - N1:
# start-up, connection set-up and teardown cancel out.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
n1=500 n2=2500 pairs=1 scpu= ccpu= sides="client server" peers="rdma tcp" nice=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--calls) n1=${2%,*} n2=${2#*,}; shift ;;
	--pairs) pairs=$2; shift ;;
	--server-cpu) scpu=$2; shift ;;
	--client-cpu) ccpu=$2; shift ;;
	--side) [ "$2" = both ] || sides=$2; shift ;;
	--peer) [ "$2" = both ] || peers=$2; shift ;;
	--nice) nice=$2; shift ;;
	-h|--help) sed -n '2,25p' "$0"; exit 0 ;;
	*) echo "instr.sh: unknown option $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done
perf=$build/tools/perf/rpcrdma-perf
if ! command -v valgrind >/dev/null 2>&1; then
	echo "instr.sh: valgrind not found (scripts/install-deps.sh installs it)" >&2
	exit 77
fi
[ -x "$perf" ] || { echo "instr.sh: $perf not found" >&2; exit 2; }
if [ -z "$scpu$ccpu" ]; then
	allowed=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status | tr ',' '\n' |
		awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
	scpu=$(echo "$allowed" | sed -n 1p)
	ccpu=$(echo "$allowed" | sed -n 2p)
	ccpu=${ccpu:-$scpu}
fi
pre=
[ -n "$nice" ] && pre="nice -n $nice"
export RPCRDMA_SIW_RX_SPIN_US=0
work=$(mktemp -d /tmp/rpcrdma-instr.XXXXXX)
trap 'rm -rf "$work"' EXIT

# count SIDE PEER N: the counted process's instructions for N calls
count() {
	local side=$1 peer=$2 n=$3 d spid rp tp fp sp log tog=
	d=$(mktemp -d "$work/run.XXXX")
	[ "$side.$peer" = server.tcp ] && tog="--toggle-collect=progress_main*"
	# --collect-atstart after the toggles: a toggle alone starts off
	local vg="valgrind --tool=callgrind --toggle-collect=lead_tick* --toggle-collect=loop_tick*
		--toggle-collect=lead_waited* --toggle-collect=evloop_waited_* $tog --collect-atstart=yes --callgrind-out-file=/dev/null --log-file=$d/cg.%p"
	local srv="$perf server --port 0 --tcp-port 0 --no-spin --cpu $scpu"
	if [ "$side" = server ]; then
		# shellcheck disable=SC2086
		timeout 300 $pre $vg $srv >"$d/s.log" 2>&1 &
	else
		# shellcheck disable=SC2086
		timeout 300 $pre $srv >"$d/s.log" 2>&1 &
	fi
	sp=$!
	for _ in $(seq 600); do
		grep -q "rdma port" "$d/s.log" 2>/dev/null && break
		kill -0 $sp 2>/dev/null || break
		sleep 0.05
	done
	read -r spid rp tp fp < <(sed -n 's/.*pid \([0-9]*\) rdma port \([0-9]*\) tcp port \([0-9]*\).*tcp-fork port \([0-9]*\).*/\1 \2 \3 \4/p' "$d/s.log")
	if [ -z "${fp:-}" ]; then
		echo "instr.sh: the server did not start: $(cat "$d/s.log")" >&2
		kill $sp 2>/dev/null
		return 1
	fi
	local cl="$perf client 127.0.0.1 --port $rp --tcp-port $tp --tcp-fork-port $fp --cpu $ccpu
		--no-spin --workload null --count $n --no-progress --peer $peer --tcp-server svc"
	local ok=1
	if [ "$side" = client ]; then
		# shellcheck disable=SC2086
		timeout 300 $pre $vg $cl >"$d/c.log" 2>&1 || ok=0
		log=$(ls "$d"/cg.* 2>/dev/null | head -1)
	else
		# shellcheck disable=SC2086
		timeout 300 $pre $cl >"$d/c.log" 2>&1 || ok=0
		log=$d/cg.$spid
	fi
	kill -TERM "$spid" 2>/dev/null
	wait $sp 2>/dev/null
	if [ $ok = 0 ]; then
		echo "instr.sh: $side $peer: the client failed: $(cat "$d/c.log")" >&2
		return 1
	fi
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log" | head -1
}

rc=0
for side in $sides; do
	for peer in $peers; do
		best=
		for p in $(seq "$pairs"); do
			a=$(count "$side" "$peer" "$n1") && b=$(count "$side" "$peer" "$n2") || { rc=1; continue; }
			v=$(awk -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.0f", (b - a) / (n2 - n1) }')
			echo "  $side $peer pair $p: $v per call ($a for $n1 calls, $b for $n2)" >&2
			if [ -z "$best" ] || [ "$v" -lt "$best" ]; then best=$v; fi
		done
		[ -n "$best" ] && echo "$side $peer $best"
	done
done
exit $rc
