#!/bin/bash
# The verbs provider on real kernel RDMA devices (issue 18): boots the
# interop guest (harness/) once and, in it, runs host-built programs over
# the verbs provider on the kernel's rxe (RoCEv2) and siw (iWARP), each in
# turn on eth0 (verbs-guest-test.sh): rpcrdma-ping and rpcrdma-perf (NULL,
# 1 MiB WRITE by Read chunk, 1 MiB READ by Write chunk) against an
# rpcrdma-perf server, the transport's e2e test programs; our NFSv3 clients
# (test_interop_nfs3_*) over verbs on siw against the guest's own nfsd;
# cross-provider both ways (verbs on the guest's siw <-> softiwarp on the
# host: a guestfwd through socat to an rpcrdma-perf server here, and a
# hostfwd to one in the guest, driven by verbs-host-hook.sh); and the same
# rpcrdma-perf runs over softiwarp in the guest for comparison. The guest's
# Debian 12 has libibverbs, librdmacm and the providers; libraries it lacks
# (ISA-L, the sanitizers' runtimes) go into the share next to the programs.
# Each step's result is a line of OUTDIR/results.txt; verbs-result.sh turns
# groups of them into ctests.
#
# usage: verbs-guest.sh OUTDIR VERBS_BUILT PING PERF PROGRAM...
#   PROGRAM  test_interop_* programs run against the guest's nfsd,
#            test_rr (reliable replies) in its scope mode on each device,
#            the others as the transport's e2e programs on each device
# env: PEER_DIR (default /tmp/rpcrdma-guest), VERBS_GUEST_TIMEOUT (default
#      900 s for the whole guest run), VERBS_COUNT_NULL (default 300),
#      VERBS_COUNT_MB (default 4), VERBS_COUNT_RR (default 100: calls per
#      mode of --workload unknown), VERBS_SRQ_CONNS (default 6:
#      connections of the shared receive queue steps): rpcrdma-perf counts (the README's
#      figures: 2000 and 20), RPCRDMA_INTEROP_VERBS=0 skips the whole run
#      (scripts/test.sh's sanitizer suite: CI time), VERBS_ACCEL (default
#      tcg), VERBS_DEVICES (default rxe,siw: the kernel devices, in
#      turn), VERBS_DEBUG (RPCRDMA_DEBUG of the e2e programs in the guest)
# exit: 0 the guest ran every step (their results: results.txt), 1 the
#       guest run failed, 77 skip (OUTDIR/skip says why: verbs provider,
#       guest or QEMU missing)
set -uo pipefail
out=${1:?usage: verbs-guest.sh OUTDIR VERBS_BUILT PING PERF PROGRAM...}
built=$2 ping=$3 perf=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
export PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}
rm -rf "$out"
mkdir -p "$out"

skip() {
	printf '%s\n' "$*" >"$out/skip"
	echo "SKIP: $*"
	exit 77
}
[ "${RPCRDMA_INTEROP_VERBS:-1}" = 0 ] &&
	skip "RPCRDMA_INTEROP_VERBS=0: the verbs guest run is turned off (scripts/test.sh sets it for the sanitizer suite: 8-13 minutes under ASan would take CI past 30 minutes)"
[ "$built" = 1 ] || skip "the verbs provider is not built (needs libibverbs-dev and librdmacm-dev)"
# the fixture interop_guest_build (guest-build.sh) built the guest before
# this run when it could; why it could not, if it tried
why=""
[ -s "$PEER_DIR/build-failed" ] && why=" (last build attempt failed: $(tr '\n' ' ' <"$PEER_DIR/build-failed" | cut -c1-300))"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed$why"
bash "$here/harness/build-guest.sh" --check >/dev/null 2>&1 ||
	skip "the interop guest is not built in $PEER_DIR (tests/interop/harness/build-guest.sh, or scripts/interop.sh)$why"

stage=$(mktemp -d)
hsrv=""
cleanup() {
	[ -n "$hsrv" ] && kill "$hsrv" 2>/dev/null && wait "$hsrv" 2>/dev/null
	rm -rf "$stage"
}
trap cleanup EXIT
mkdir -p "$stage/bin" "$stage/lib"
tests="" nfs="" rr=""
for p in "$ping" "$perf" "$@"; do
	cp "$p" "$stage/bin/"
	b=$(basename "$p")
	case $p in
	"$ping" | "$perf") ;;
	*/test_interop_*) nfs="$nfs,$b" ;;
	*/test_rr) rr=$b ;;
	*) tests="$tests,$b" ;;
	esac
	# every shared library the guest's root file system lacks
	ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
		[ -e "$PEER_DIR/rootfs$lib" ] || cp -L "$lib" "$stage/lib/"
	done
done

# A free host port (below the ephemeral range, away from the ranges of
# guest-start.sh and the softiwarp wire tests).
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((8000 + RANDOM % 4000))
		ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . && continue
		[ "$p" = "${1:-}" ] || [ "$p" = "${2:-}" ] && continue
		echo "$p"
		return 0
	done
	return 1
}
nnull=${VERBS_COUNT_NULL:-300} nmb=${VERBS_COUNT_MB:-4} nrr=${VERBS_COUNT_RR:-100}
cross=0 fwd=""
rport=$(free_port) || { echo "FAIL: no free port"; exit 1; }
if command -v socat >/dev/null; then
	if ! g2h=$(free_port "$rport") || ! h2g=$(free_port "$rport" "$g2h"); then
		echo "FAIL: no free port"
		exit 1
	fi
	# the host's side of cross-provider: our server over softiwarp
	RPCRDMA_PROVIDER=softiwarp "$perf" server --port "$g2h" --no-tcp --bind 127.0.0.1 \
		>"$out/cross-g2h-host-server.log" 2>&1 &
	hsrv=$!
	fwd=",guestfwd=tcp:10.0.2.100:20152-cmd:$here/nfs3d-fwd.sh $g2h"
	fwd+=",hostfwd=tcp:127.0.0.1:$h2g-10.0.2.15:20151"
	cross=1
else
	echo "note: no socat: the cross-provider steps are left out"
	printf 'no socat on the host (the guestfwd needs it)\n' >"$out/skip-cross"
fi

# TCG, as the suite's guest: KVM here (nested) refuses QEMU's -cpu host
# (MSR 0x10a) and does not boot the kernel with that MSR left out
accel=${VERBS_ACCEL:-tcg}
echo "[verbs] guest run ($accel): e2e programs ${tests#,}; NFS programs ${nfs#,}; cross $cross"
t0=$(date +%s.%N)
# no_timer_check: a loaded host makes TCG miss the boot's timer check
SHARE_FILES=$stage NAME=verbs-$(printf '%s' "$out" | md5sum | cut -c1-8) \
	CMDLINE_EXTRA=no_timer_check HOSTFWD_PORT=$rport HOSTFWD_EXTRA="$fwd" ACCEL=$accel \
	TIMEOUT=${VERBS_GUEST_TIMEOUT:-900} \
	GUEST_ENV="VERBS_TESTS=${tests#,} VERBS_NFS=${nfs#,} VERBS_RR=$rr VERBS_CROSS=$cross VERBS_COUNT_NULL=$nnull VERBS_COUNT_MB=$nmb VERBS_COUNT_RR=$nrr VERBS_SRQ_CONNS=${VERBS_SRQ_CONNS:-6} VERBS_DEVICES=${VERBS_DEVICES:-rxe,siw} VERBS_DEBUG=${VERBS_DEBUG:-}" \
	HOST_HOOK=$here/verbs-host-hook.sh VERBS_H2G_PORT=${h2g:-0} VERBS_PING=$ping VERBS_PERF=$perf \
	VERBS_COUNT_NULL=$nnull VERBS_COUNT_MB=$nmb \
	bash "$here/harness/run-guest.sh" "$here/verbs-guest-test.sh" "$out" >"$out/run.log" 2>&1
rc=$?
echo "[verbs] guest run took $(echo "$(date +%s.%N) - $t0" | bc) s (rc $rc)"
cat "$out/run.log"
echo "---- results (guest) ----"
cat "$out/results.txt" 2>/dev/null || echo "(none: see $out/serial.log)"
echo "---- figures (guest, emulated) ----"
cat "$out/figures.txt" 2>/dev/null
if [ $rc != 0 ] || [ ! -s "$out/results.txt" ]; then
	echo "FAIL: guest run failed (rc $rc); logs in $out"
	exit 1
fi
echo "PASS (each step's result: verbs-result.sh)"
