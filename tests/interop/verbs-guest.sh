#!/bin/bash
# The verbs provider on real kernel RDMA devices (issue 18): boots the
# interop guest (harness/) once and, in it, runs host-built programs over
# the verbs provider on the kernel's siw (iWARP) and rxe (RoCEv2), each in turn
# on eth0: rpcrdma-ping and rpcrdma-perf (NULL, 1 MiB WRITE by Read chunk,
# 1 MiB READ by Write chunk) against an rpcrdma-perf server, the
# transport's e2e test programs given on the command line, and the same
# rpcrdma-perf runs over softiwarp in the guest for comparison. The guest's
# Debian 12 has libibverbs, librdmacm and the providers; libraries it lacks
# (ISA-L) go into the share next to the programs.
#
# usage: verbs-guest.sh OUTDIR VERBS_BUILT PING PERF TEST_PROGRAM...
# env: PEER_DIR (default /tmp/rpcrdma-guest), VERBS_GUEST_TIMEOUT (default
#      1500 s for the whole guest run)
# exit: 0 pass, 1 fail, 77 skip (verbs provider not built, guest not built)
set -uo pipefail
out=${1:?usage: verbs-guest.sh OUTDIR VERBS_BUILT PING PERF TEST...}
built=$2 ping=$3 perf=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
export PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}

skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$built" = 1 ] || skip "the verbs provider is not built (needs libibverbs-dev and librdmacm-dev)"
bash "$here/harness/build-guest.sh" --check >/dev/null 2>&1 ||
	skip "the interop guest is not built in $PEER_DIR (tests/interop/harness/build-guest.sh, or scripts/interop.sh)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
tests=""
for p in "$ping" "$perf" "$@"; do
	cp "$p" "$stage/bin/"
	[ "$p" = "$ping" ] || [ "$p" = "$perf" ] || tests="$tests $(basename "$p")"
	# every shared library the guest's root file system lacks
	ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
		[ -e "$PEER_DIR/rootfs$lib" ] || cp -L "$lib" "$stage/lib/"
	done
done
cp "$here/verbs-guest-test.sh" "$stage/"

rm -rf "$out"
mkdir -p "$out"
accel=tcg
[ -w /dev/kvm ] && accel=kvm
echo "[verbs] guest run ($accel): programs $tests"
# no_timer_check: a loaded host makes TCG miss the boot's timer check
SHARE_FILES=$stage NAME=verbs CMDLINE_EXTRA=no_timer_check HOSTFWD_PORT=${VERBS_HOSTFWD_PORT:-24149} ACCEL=$accel \
	TIMEOUT=${VERBS_GUEST_TIMEOUT:-1500} GUEST_ENV="VERBS_TESTS=$(echo $tests | tr ' ' ,)" \
	bash "$here/harness/run-guest.sh" "$here/verbs-guest-test.sh" "$out" >"$out/run.log" 2>&1
rc=$?
cat "$out/run.log"
echo "---- results (guest) ----"
cat "$out/results.txt" 2>/dev/null || echo "(none: see $out/serial.log)"
echo "---- figures (guest, emulated) ----"
cat "$out/figures.txt" 2>/dev/null
[ $rc = 0 ] || { echo "FAIL: guest run failed (rc $rc); logs in $out"; exit 1; }
echo PASS
