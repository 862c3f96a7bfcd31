#!/usr/bin/env bash
# The interop suite in one command: our client side against the Linux
# kernel's NFS server (svcrdma, nfsd) over soft-iWARP, in a QEMU guest.
#
#   1. builds the guest if it is not built yet or was built by another
#      version of the harness: tests/interop/harness/build-guest.sh
#      (apt-get + debootstrap from the Debian archive, a few minutes,
#      once; artifacts in PEER_DIR, default /tmp/rpcrdma-guest);
#   2. configures and builds BUILD_DIR (default build-tests/interop) and
#      runs `ctest -L interop` there: one guest boot for the whole suite
#      (tests/interop/CMakeLists.txt says what runs).
# Results: BUILD_DIR/tests/interop/guest/ (guest logs, the capture
# interop.pcap and its tshark summaries capture-*.txt, perf-summary.txt:
# our client's 1 MiB READ/WRITE figures next to the kernel NFS client's,
# printed at the end).
#
# If the guest cannot be built (no archive access, no qemu), the reason is
# printed and every interop test reports a skip (exit 77), never a pass;
# this script then exits 77.
#
# env: PEER_DIR, BUILD_DIR
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
harness=$root/tests/interop/harness
export PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}
build=${BUILD_DIR:-build-tests/interop}
guest_built() {
	bash "$harness/build-guest.sh" --check && command -v qemu-system-x86_64 >/dev/null
}

no_guest=0
if guest_built; then
	echo "=== guest: already built in $PEER_DIR"
else
	mkdir -p "$PEER_DIR"
	log=$PEER_DIR/build-guest.log
	echo "=== guest: building with $harness/build-guest.sh (log: $log)"
	t0=$(date +%s)
	if bash "$harness/build-guest.sh" >"$log" 2>&1 && guest_built; then
		rm -f "$PEER_DIR/build-failed"
		echo "=== guest: built in $(($(date +%s) - t0)) s"
	else
		tail -5 "$log" >"$PEER_DIR/build-failed"
		echo "=== guest: build FAILED after $(($(date +%s) - t0)) s; last lines:"
		cat "$PEER_DIR/build-failed"
		no_guest=1
	fi
fi

mkdir -p "$(dirname "$build")"
echo "=== configure + build $build"
cmake -S "$root" -B "$build" -DRPCRDMA_WERROR=ON \
	>"$build.configure.log" 2>&1 || {
	cat "$build.configure.log"
	exit 1
}
# Only what the interop label runs (its C test programs are targets of the
# same name), so unrelated work in progress elsewhere cannot block it.
mapfile -t targets < <(ctest --test-dir "$build" -N -L interop |
	sed -n 's/^ *Test *#[0-9]*: \(test_interop_[A-Za-z0-9_]*\)$/\1/p')
[ ${#targets[@]} -gt 0 ] || {
	echo "no interop tests configured (see $build.configure.log)"
	exit 1
}
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >"$build.build.log" 2>&1 || {
	grep -E 'error|warning' "$build.build.log" | head -40
	echo "build FAILED (full log: $build.build.log)"
	exit 1
}
echo "=== ctest -L interop"
t0=$(date +%s)
ctest --test-dir "$build" -L interop --output-on-failure
rc=$?
echo "=== interop suite: $(($(date +%s) - t0)) s (results in $build/tests/interop/guest)"
# Our client's 1 MiB READ/WRITE figures next to the kernel NFS client's
# (written by interop_guest_stop).
if [ -s "$build/tests/interop/guest/perf-summary.txt" ]; then
	echo "=== figures ($build/tests/interop/guest/perf-summary.txt)"
	cat "$build/tests/interop/guest/perf-summary.txt"
fi
if [ -f "$build/tests/interop/guest/skip" ]; then
	echo "=== interop suite SKIPPED: $(cat "$build/tests/interop/guest/skip")"
	no_guest=1
fi
[ $rc -ne 0 ] && exit $rc
[ $no_guest -eq 1 ] && exit 77
exit 0
