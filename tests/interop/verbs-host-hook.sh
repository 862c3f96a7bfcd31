#!/bin/bash
# HOST_HOOK of verbs-guest.sh (harness/run-guest.sh runs it once the guest
# touched /peer/out/ready-host): our client on the host over softiwarp
# against our server in the guest over verbs on siw0 (rpcrdma-perf server
# on the guest's wildcard address, port 20151, reached through the hostfwd
# 127.0.0.1:VERBS_H2G_PORT). Result lines go to the guest's results.txt
# (the guest waits meanwhile), logs next to them.
# env (from verbs-guest.sh): VERBS_H2G_PORT, VERBS_PING, VERBS_PERF,
#      VERBS_COUNT_NULL, VERBS_COUNT_MB; OUT (run-guest.sh: the share's out/)
set -u
port=${VERBS_H2G_PORT:?} out=${OUT:?}
nnull=${VERBS_COUNT_NULL:-300} nmb=${VERBS_COUNT_MB:-5}
export RPCRDMA_PROVIDER=softiwarp
step() { # NAME COMMAND...
	local name=$1 rc t0
	shift
	t0=$(date +%s.%N)
	timeout 300 "$@" >"$out/$name.log" 2>&1
	rc=$?
	echo "$name rc=$rc ($(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.1f') s)" |
		tee -a "$out/results.txt"
	return $rc
}
step cross-h2g-ping "$VERBS_PING" -c 3 -i 0.2 -p "$port" 127.0.0.1
for w in "null --count $nnull" "write --size 1M --count $nmb" "read --size 1M --count $nmb"; do
	# shellcheck disable=SC2086 # the workload words split on purpose
	step "cross-h2g-perf-${w%% *}" "$VERBS_PERF" client 127.0.0.1 --port "$port" --peer rdma \
		--no-progress --workload $w &&
		sed -n "s/^/cross-h2g /p" "$out/cross-h2g-perf-${w%% *}.log" | grep -i 'rdma' \
			>>"$out/figures.txt"
done
exit 0
