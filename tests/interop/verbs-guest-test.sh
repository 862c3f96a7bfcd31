# shellcheck shell=bash
# Runs in the interop guest (as /peer/test.sh, after the GUEST_ENV exports
# run-guest.sh puts first; started by verbs-guest.sh): the verbs provider
# on rxe, then on siw, then softiwarp for comparison. Each step's output is
# in /peer/out/STEP.log; /peer/out/results.txt has one "STEP rc=N" line per
# step (verbs-result.sh reads them on the host, one ctest per group).
#   rxe-*, siw-*   rpcrdma-ping, rpcrdma-perf NULL / 1 MiB WRITE / 1 MiB
#                  READ with the data checked, and the transport's e2e
#                  programs (VERBS_TESTS), each device on eth0 in turn
#   nfs-*          our hand-built NFSv3 clients (VERBS_NFS) over verbs on
#                  siw0 against this guest's nfsd (svcrdma on siw0)
#   cross-*        verbs on siw0 <-> softiwarp on the host: our client here
#                  against the host's rpcrdma-perf server (10.0.2.100:20152,
#                  a guestfwd), then our server here (20151) for the host's
#                  client (the host hook, verbs-host-hook.sh)
#   softiwarp-*    rpcrdma-perf over softiwarp on 127.0.0.1 (figures)
#   *-perf-unknown-vN  issue 16's figure: rpcrdma-perf --workload unknown
#                  (reliable replies against a 1 MiB Reply chunk, every
#                  payload checked) in Version N, on rxe, siw, softiwarp
#   siw-pin-echo   24 1 MiB echoes on one connection to a server limited
#                  to 8 MiB of locked memory (issue 16)
#   rxe-srq-on, siw-srq-on  issue 20: rpcrdma-perf server with its shared
#                  receive queue (the device's SRQ), VERBS_SRQ_CONNS
#                  connections each with one 64 KiB WRITE (checksummed):
#                  the queue's depth and capacity in the server's stats,
#                  every connection accepted with one credit, grants
#                  raised by the replies within the queue (srq_check)
#   rxe-srq-off    the same with --srq-depth 0: no queue, a pool per
#                  connection, every grant the full 64
#   rxe-rr-scope, siw-rr-scope  test_rr scope (VERBS_RR): a Read of a
#                  reply exposed to another connection fails; rc=77 with
#                  the reason where the device cannot scope (siw)
# env: VERBS_TESTS, VERBS_NFS  programs in /peer/bin, comma-separated
#      (GUEST_ENV splits on spaces); VERBS_RR the test_rr program;
#      VERBS_COUNT_NULL, VERBS_COUNT_MB, VERBS_COUNT_RR
#      (rpcrdma-perf counts: NULL calls, 1 MiB calls each way, calls per
#      mode of --workload unknown);
#      VERBS_CROSS=1 the cross-provider steps (the host is set up for them);
#      VERBS_SRQ_CONNS (default 6) connections of the srq steps;
#      VERBS_DEVICES (default rxe,siw) the kernel devices in turn (a
#      run by hand on one of them: shorter); VERBS_DEBUG a level for
#      RPCRDMA_DEBUG in the e2e programs' steps (their logs say why)
# Devices sit on eth0 and are reached at 10.0.2.15: rdma_cm routes neither
# siw on lo nor rxe for 127.0.0.1 (-ENOENT and -ENODEV). The e2e programs
# listen and connect on $RPCRDMA_TEST_ADDR (tests/lib/test_server.c). One
# device at a time: with siw and rxe both on eth0, rdma_cm binds 10.0.2.15
# to the first one added. rxe goes first, so that nfsd (whose listener is
# on siw0) never sees its device removed.
set -u
out=/peer/out
bin=/peer/bin
export LD_LIBRARY_PATH=/peer/lib
: >"$out/results.txt"
: >"$out/figures.txt"
nnull=${VERBS_COUNT_NULL:-300}
nmb=${VERBS_COUNT_MB:-4}
nrr=${VERBS_COUNT_RR:-100}
up() { cut -d' ' -f1 /proc/uptime; }

step() { # NAME TIMEOUT COMMAND...
	local name=$1 tmo=$2 rc t0
	shift 2
	t0=$(up)
	timeout "$tmo" "$@" >"$out/$name.log" 2>&1
	rc=$?
	# a skipped step (77) carries its reason on its line
	echo "$name rc=$rc ($(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }') s)$(
		[ $rc = 77 ] && grep -m1 '^SKIP' "$out/$name.log" | sed 's/^/ /')" |
		tee -a "$out/results.txt"
	return $rc
}

# rpcrdma-perf @kind runs against ADDR PORT; figures lines "KIND ..."
perf_runs() { # KIND ADDR PORT
	local kind=$1 addr=$2 port=$3 w
	for w in "null --count $nnull" "write --size 1M --count $nmb" "read --size 1M --count $nmb"; do
		# shellcheck disable=SC2086 # the workload words split on purpose
		step "$kind-perf-${w%% *}" 300 "$bin/rpcrdma-perf" client "$addr" --port "$port" \
			--peer rdma --no-progress --workload $w &&
			sed -n "s/^/$kind /p" "$out/$kind-perf-${w%% *}.log" | grep -i 'rdma' \
				>>"$out/figures.txt"
	done
}

# Issue 16's figure against the server at ADDR PORT (--reliable-reply):
# per version a step and a figures line "KIND unknown vN: ..." (means of
# both modes, their ratio, bytes registered per call by each side)
unknown_runs() { # KIND ADDR PORT
	local kind=$1 addr=$2 port=$3 v
	for v in 1 2; do
		step "$kind-perf-unknown-v$v" 120 "$bin/rpcrdma-perf" client "$addr" --port "$port" \
			--workload unknown --rdma-version $v --count "$nrr" --block 25 --warmup 0.2 &&
			awk -v k="$kind unknown v$v" '
				$1 == "rr-read-chunk" { rr = $3; rc = $9; rs = $10; n = $2 }
				$1 == "reply-chunk-1MiB" { ch = $3; cc = $9; cs = $10 }
				/^ratio/ { r = $4 }
				END { printf "%s: mean us rr-read-chunk %s, reply-chunk-1MiB %s, ratio %s; " \
					"B registered per call rr/chunk: client %s/%s, server %s/%s; " \
					"%s calls per mode, checked\n", k, rr, ch, r, rc, cc, rs, cs, n }' \
				"$out/$kind-perf-unknown-v$v.log" >>"$out/figures.txt"
	done
}

# until a server answers a NULL at ADDR PORT (a fixed sleep was too short
# for a sanitizer build under TCG on a loaded host), at most 60 s
wait_server() { # ADDR PORT
	local i
	for i in $(seq 1 30); do
		timeout 10 "$bin/rpcrdma-ping" -c 1 -p "$2" "$1" >/dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}

# Issue 16: a kernel device pins what is registered, and Linux siw
# charges the pins to RLIMIT_MEMLOCK even for root. A server whose
# RDMA Writes' sources stayed registered after each reply held one 1 MiB
# registration per request slot (64 on one connection) until the limit
# refused the next one (ERR_CHUNK at the 7th 1 MiB echo before the fix).
# Here the limit is 8 MiB (the kernel's default) and one connection takes
# 1 MiB echoes (Reply chunks) three times over.
pin_runs() { # KIND ADDR
	local kind=$1 addr=$2 spid
	(ulimit -l 8192 && exec "$bin/rpcrdma-perf" server --port 20160 --no-tcp) \
		>"$out/$kind-pin-server.log" 2>&1 &
	spid=$!
	wait_server "$addr" 20160
	step "$kind-pin-echo" 120 "$bin/rpcrdma-perf" client "$addr" --port 20160 \
		--peer rdma --no-progress --workload echo --size 1M --count 24
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}

# rpcrdma-perf server on @addr:20150 (reliable replies on: nothing
# changes for calls whose replies fit what they offer); ping, the three
# workloads and --workload unknown
tools() { # KIND ADDR
	local kind=$1 addr=$2 spid
	"$bin/rpcrdma-perf" server --port 20150 --no-tcp --reliable-reply --rdma-version auto \
		>"$out/$kind-perf-server.log" 2>&1 &
	spid=$!
	wait_server "$addr" 20150
	step "$kind-ping" 60 "$bin/rpcrdma-ping" -c 3 -i 0.2 -p 20150 "$addr"
	perf_runs "$kind" "$addr" 20150
	unknown_runs "$kind" "$addr" 20150
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}

# Issue 20 (one step): an rpcrdma-perf server on ADDR:20153 with its
# shared receive queue (MODE on: the default depth, 16 x 64 credits) or
# without (off: --srq-depth 0), RPCRDMA_DEBUG=info for its accept lines;
# a client opens VERBS_SRQ_CONNS connections, one 64 KiB WRITE on each
# (the server's checksum checked by the client), holds them while the
# server prints its table (SIGUSR1): then srq_check reads the server log.
# The hold is 5 s: with 1 s, a guest under TCG on a loaded host printed
# the table after two of the six connections had closed (rxe-srq-off:
# "4 up", 2026-12-07).
# shellcheck disable=SC2317 # run by step through bash -c (export -f)
srq_case() { # KIND ADDR MODE
	local kind=$1 addr=$2 mode=$3 n=${VERBS_SRQ_CONNS:-6} i rc
	local slog=$out/$kind-srq-$mode-server.log clog=$out/$kind-srq-$mode-client.log
	local depth=()
	spid="" cpid=""
	# the step's timeout ends this shell: never leave the server (its
	# port) or the client to the next step
	trap '[ -n "$cpid" ] && kill "$cpid"; [ -n "$spid" ] && kill "$spid"' EXIT
	trap 'exit 1' TERM
	[ "$mode" = off ] && depth=(--srq-depth 0)
	# siw pins registrations within RLIMIT_MEMLOCK even for root: the
	# guest's default limit stopped the client at 41 connections and the
	# server's shared pool (21,024 receives of 1 KiB) at ENOMEM
	ulimit -l unlimited 2>/dev/null
	env RPCRDMA_DEBUG=info "$bin/rpcrdma-perf" server --port 20153 --no-tcp "${depth[@]}" \
		>"$slog" 2>&1 &
	spid=$!
	wait_server "$addr" 20153 || { echo "FAIL: no server"; return 1; }
	"$bin/rpcrdma-perf" client "$addr" --port 20153 --workload write --size 64K \
		--connections "$n" --hold 5 --no-progress >"$clog" 2>&1 &
	cpid=$!
	for i in $(seq 1 600); do
		grep -q '^holding' "$clog" && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.2
	done
	kill -USR1 "$spid"
	wait "$cpid"
	rc=$?
	cpid=""
	sleep 0.5
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=""
	cat "$clog"
	[ "$rc" = 0 ] || { echo "FAIL: client rc $rc (a WRITE failed or was not checked)"; return 1; }
	srq_check "$slog" "$mode" "$n"
}

# The server's first table (SIGUSR1, connections held): N rows "up".
# on: "shared receive queue: depth D capacity C" (C >= D + N), every
# connection accepted with one credit, grants within [1, 64], their sum
# within C and most raised above 1; off: no queue, every grant 64.
# shellcheck disable=SC2317 # called by srq_case
srq_check() { # SERVER_LOG MODE N
	awk -v mode="$2" -v n="$3" '
		/credits granted 1 \(shared receive queue/ { one++ }
		/credits granted 64$/ { full++ }
		$1 == "conn" && $2 == "peer" { tables++ }
		tables == 1 && $3 == "up" { up++; sum += $4; if ($4 > 1) raised++
			if ($4 < 1 || $4 > 64 || (mode == "off" && $4 != 64)) bad++ }
		tables == 1 && /^shared receive queue: depth/ { d = $5; c = $7 }
		tables == 1 && /^shared receive queue: none/ { none = 1 }
		END {
			printf "%d up, grants sum %d, %d raised, %d out of range; accepted with 1: %d, with 64: %d; queue depth %s capacity %s%s\n", up, sum, raised, bad, one, full, d, c, none ? " (none)" : ""
			if (up != n || bad) exit 1
			if (mode == "on") {
				if (d < 1 || c < d + n || one < n || sum > c || raised < n / 2) exit 1
			} else if (!none || full < n) exit 1
		}' "$1" && echo PASS
}
export -f srq_case srq_check wait_server
export out bin

# The subset of guest/nfs-server.sh our NFS clients read and write:
# export.cksum in /peer/out, nfsd with its RDMA listener on 20049 (siw0),
# mountd on tcp 20048.
nfsd_up() {
	modprobe rpcrdma
	mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p /run/rpcbind /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs
	rpcbind -w
	mkdir -p /export/interop
	head -c 1048576 /dev/urandom >/export/interop/read-1m
	head -c 1000003 /dev/urandom >/export/interop/read-odd
	head -c 4097 /dev/urandom >/export/interop/read-4097
	printf 'interop hello\n' >/export/interop/hello.txt
	for f in write-1m write-odd write-clnt; do : >/export/interop/$f; done
	chmod 0666 /export/interop/*
	mkdir -p /export/interop/dir2000
	for i in $(seq 1 2000); do : >"/export/interop/dir2000/f$i"; done
	echo '/export *(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0,sec=sys)' >/etc/exports
	exportfs -ra
	rpc.mountd -p 20048
	echo 1048576 >/proc/fs/nfsd/max_block_size
	rpc.nfsd 4
	grep -q rdma /proc/fs/nfsd/portlist || echo "rdma 20049" >/proc/fs/nfsd/portlist
	(cd /export/interop && cksum read-1m read-odd read-4097 hello.txt) >"$out/export.cksum"
	grep -q rdma /proc/fs/nfsd/portlist
}

modprobe ib_uverbs
modprobe rdma_ucm
modprobe siw
modprobe rdma_rxe
devs=${VERBS_DEVICES:-rxe,siw}
for kind in ${devs//,/ }; do
	dev=${kind}0
	addr=10.0.2.15
	if ! step "$kind-link" 20 rdma link add "$dev" type "$kind" netdev eth0; then
		continue
	fi
	{
		rdma link show
		ibv_devices
		# type-2 memory windows (rpcrdma_mr_bind_ep): max_mw, the
		# MEM_WINDOW_TYPE_2A/2B capability flags; the shared receive
		# queue's limits (issue 20)
		echo "RLIMIT_MEMLOCK (kB): $(ulimit -l)"
		ibv_devinfo -v -d "$dev" | grep -i -E 'max_mw|mem_window|device_cap_flags|max_srq'
		"$bin/rpcrdma-ping" --list-devices
	} >>"$out/$kind-link.log" 2>&1
	export RPCRDMA_PROVIDER=verbs:$dev
	tools "$kind" "$addr"
	if [ "$kind" = siw ]; then pin_runs "$kind" "$addr"; fi
	step "$kind-srq-on" 120 bash -c 'srq_case "$@"' _ "$kind" "$addr" on
	# the pools per connection over verbs once (the tools steps' server
	# has them too: --reliable-reply): the guest run's time
	[ "$kind" = rxe ] &&
		step "$kind-srq-off" 120 bash -c 'srq_case "$@"' _ "$kind" "$addr" off
	[ -n "${VERBS_RR:-}" ] &&
		step "$kind-rr-scope" 120 env RPCRDMA_DEBUG=info RPCRDMA_TEST_ADDR="$addr" "$bin/$VERBS_RR" scope
	tl=${VERBS_TESTS:-}
	for t in ${tl//,/ }; do
		step "$kind-$t" 300 env ${VERBS_DEBUG:+RPCRDMA_DEBUG=$VERBS_DEBUG} \
			RPCRDMA_TEST_ADDR="$addr" "$bin/$t"
	done
	unset RPCRDMA_PROVIDER
	[ "$kind" = rxe ] && rdma link delete "$dev" >/dev/null 2>&1
done

# siw0 stays: nfsd over it, our NFS clients over verbs on it
nfsd_up >"$out/nfs-server.log" 2>&1
rc=$?
echo "nfs-server rc=$rc" | tee -a "$out/results.txt"
if [ $rc = 0 ]; then
	nl=${VERBS_NFS:-}
	for t in ${nl//,/ }; do
		step "nfs-$t" 180 env RPCRDMA_INTEROP_PROVIDER=verbs:siw0 RPCRDMA_INTEROP_ADDR=10.0.2.15 \
			RPCRDMA_INTEROP_RDMA_PORT=20049 RPCRDMA_INTEROP_MOUNT_PORT=20048 \
			RPCRDMA_INTEROP_GUEST_OUT="$out" "$bin/$t"
	done
	(cd /export/interop && cksum write-1m write-odd) >"$out/after.cksum"
fi

if [ "${VERBS_CROSS:-0}" = 1 ]; then
	# our client on siw0 -> the host's server (softiwarp) through the
	# guestfwd 10.0.2.100:20152
	export RPCRDMA_PROVIDER=verbs:siw0
	# -w 30: the first connection through the guestfwd starts its socat
	# (nfs3d-fwd.sh) on the host; under TCG on a loaded host that took
	# longer than ping's 5 s connect timeout (CI, load 18: 8.3 s)
	step cross-g2h-ping 60 "$bin/rpcrdma-ping" -c 3 -i 0.2 -w 30 -p 20152 10.0.2.100
	perf_runs cross-g2h 10.0.2.100 20152
	# our server on siw0 (the wildcard address) for the host's client
	"$bin/rpcrdma-perf" server --port 20151 --no-tcp >"$out/cross-h2g-server.log" 2>&1 &
	spid=$!
	wait_server 10.0.2.15 20151
	touch "$out/ready-host"
	i=0
	while [ ! -e /peer/host-done ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i + 1)); done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	unset RPCRDMA_PROVIDER
fi

export RPCRDMA_PROVIDER=softiwarp
tools softiwarp 127.0.0.1
unset RPCRDMA_PROVIDER
dmesg | tail -80 >"$out/dmesg-tail.txt"
exit 0
