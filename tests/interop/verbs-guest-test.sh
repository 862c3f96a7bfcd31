# Runs in the interop guest (as /peer/test.sh, after the GUEST_ENV exports
# run-guest.sh puts first): the verbs provider on siw, then on rxe, then
# softiwarp for comparison. Each step's output is in /peer/out/STEP.log;
# /peer/out/results.txt has one "STEP rc=N" line per step.
# env: VERBS_TESTS  the test programs in /peer/bin to run on each device,
#      comma-separated (GUEST_ENV splits on spaces)
# Devices sit on eth0 and are reached at 10.0.2.15: rdma_cm routes neither
# siw on lo nor rxe for 127.0.0.1 (a first run: -ENOENT and -ENODEV). The
# e2e programs listen and connect on $RPCRDMA_TEST_ADDR (tests/lib/
# test_server.c). One device at a time: with siw and rxe both on eth0,
# rdma_cm binds 10.0.2.15 to the first one added (rxe refuses a VLAN
# device, the only other netdev this guest's modules can make).
set -u
out=/peer/out
bin=/peer/bin
export LD_LIBRARY_PATH=/peer/lib
: >"$out/results.txt"
: >"$out/figures.txt"
fail=0

step() { # NAME TIMEOUT COMMAND...
	local name=$1 tmo=$2 rc
	shift 2
	timeout "$tmo" "$@" >"$out/$name.log" 2>&1
	rc=$?
	echo "$name rc=$rc" | tee -a "$out/results.txt"
	[ $rc = 0 ] || [ $rc = 77 ] || fail=1
	return $rc
}

# rpcrdma-perf server on @addr; ping and the three workloads against it
tools() { # KIND ADDR
	local kind=$1 addr=$2 spid
	"$bin/rpcrdma-perf" server --port 20150 --no-tcp >"$out/$kind-perf-server.log" 2>&1 &
	spid=$!
	sleep 3
	step "$kind-ping" 60 "$bin/rpcrdma-ping" -c 3 -i 0.2 -p 20150 "$addr"
	for w in "null --count 2000" "write --size 1M --count 40" "read --size 1M --count 40"; do
		# shellcheck disable=SC2086 # the workload words split on purpose
		step "$kind-perf-${w%% *}" 300 "$bin/rpcrdma-perf" client "$addr" --port 20150 \
			--peer rdma --no-progress --workload $w &&
			sed -n "s/^/$kind /p" "$out/$kind-perf-${w%% *}.log" | grep -i 'rdma' \
				>>"$out/figures.txt"
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}

modprobe ib_uverbs
modprobe rdma_ucm
modprobe siw
modprobe rdma_rxe
for kind in siw rxe; do
	case $kind in
	siw) dev=siw0 net=eth0 addr=10.0.2.15 ;;
	rxe) dev=rxe0 net=eth0 addr=10.0.2.15 ;;
	esac
	if ! rdma link add "$dev" type "$kind" netdev "$net" >"$out/$kind-link.log" 2>&1; then
		echo "$kind-link rc=1" | tee -a "$out/results.txt"
		fail=1
		continue
	fi
	{
		rdma link show
		ibv_devices
		"$bin/rpcrdma-ping" --list-devices
	} >>"$out/$kind-link.log" 2>&1
	export RPCRDMA_PROVIDER=verbs:$dev
	tools "$kind" "$addr"
	tl=${VERBS_TESTS:-}
	for t in ${tl//,/ }; do
		step "$kind-$t" 300 env RPCRDMA_TEST_ADDR="$addr" "$bin/$t"
	done
	unset RPCRDMA_PROVIDER
	rdma link delete "$dev" >/dev/null 2>&1
done
export RPCRDMA_PROVIDER=softiwarp
tools softiwarp 127.0.0.1
unset RPCRDMA_PROVIDER
dmesg | tail -50 >"$out/dmesg-tail.txt"
exit $fail
