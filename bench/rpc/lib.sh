# shellcheck shell=sh disable=SC2034,SC2154
# (SC2034, SC2154: the variables are the sourcing script's)
# What the benchmark scripts of this folder share (sourced by run.sh and
# scale.sh after they set root and build): the options they all take, the
# check for rpcrdma-perf, the CPU placement, starting and stopping the
# server. Variables set here: build out placement scpu ccpu nice (options),
# perf, sarg carg pre (placement), spid (the server).

# bench_opt OPTION VALUE: one of --build --out --placement --server-cpu
# --client-cpu --nice into its variable.
bench_opt() {
	case $1 in
	--build) build=$2 ;;
	--out) out=$2 ;;
	--placement) placement=$2 ;;
	--server-cpu) scpu=$2 ;;
	--client-cpu) ccpu=$2 ;;
	--nice) nice=$2 ;;
	esac
}

# bench_need_perf NAME: perf = $build's rpcrdma-perf, or exit 2 saying how
# to build it.
bench_need_perf() {
	perf=$build/tools/perf/rpcrdma-perf
	if [ ! -x "$perf" ]; then
		echo "$1: $perf not found; build first:" >&2
		echo "  cmake -S $root -B $build && cmake --build $build -j" >&2
		exit 2
	fi
}

# bench_placement NAME: scpu and ccpu, unless given, from $placement:
# cross = server on the first allowed CPU, client on the second; same =
# both on the first; none = the scheduler decides. Then sarg and carg
# (rpcrdma-perf's --cpu of each side, empty when unpinned) and pre (the
# nice prefix of every benchmark process, empty without --nice).
bench_placement() {
	allowed=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status | tr ',' '\n' |
		awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
	first=$(echo "$allowed" | sed -n 1p)
	second=$(echo "$allowed" | sed -n 2p)
	if [ -z "$scpu$ccpu" ]; then
		case $placement in
		cross) scpu=$first ccpu=${second:-$first} ;;
		same) scpu=$first ccpu=$first ;;
		none) ;;
		*) echo "$1: --placement cross|same|none" >&2; exit 2 ;;
		esac
	fi
	sarg='' carg=''
	[ -n "$scpu" ] && sarg="--cpu $scpu"
	[ -n "$ccpu" ] && carg="--cpu $ccpu"
	pre=''
	[ -n "$nice" ] && pre="nice -n $nice"
	return 0
}

# bench_wait_server NAME LOG: until the server $spid writes its ready line
# ("... rdma port N ...") to LOG; exit 1 with LOG shown if it does not
# within 10 s or dies.
bench_wait_server() {
	i=0
	until grep -q "rdma port" "$2" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$spid" 2>/dev/null; then
			echo "$1: server did not start:" >&2
			cat "$2" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# bench_stop_server: SIGTERM to the server $spid, SIGKILL after 15 s.
bench_stop_server() {
	if [ -n "$spid" ]; then
		kill -TERM "$spid" 2>/dev/null || true
		i=0
		while kill -0 "$spid" 2>/dev/null && [ $i -lt 150 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
		spid=
	fi
}

# bench_machine: the line each result table starts with, "date D, CPU
# model, N CPUs, Linux R, commit C" (machine and commit stay set).
bench_machine() {
	commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
	machine=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
	echo "date $(date -u +%FT%TZ), $machine, $(nproc) CPUs, Linux $(uname -r), commit $commit"
}
