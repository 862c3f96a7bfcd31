#!/bin/bash
# ctest fixture setup of every guest run (test interop_guest_build): builds
# the QEMU guest (harness/build-guest.sh, which also installs QEMU) when it
# is missing or of another harness version, before the first test that
# boots it. Both guest runs require it: the verbs provider's own guest
# (interop_verbs_guest, which runs first) and the suite's guest
# (interop_guest_start). Before this fixture only interop_guest_start
# built the guest, after the verbs run had already skipped for want of it,
# so a fresh clone never ran the 15 interop_verbs_* tests.
#
# usage: guest-build.sh
# env: PEER_DIR (default /tmp/rpcrdma-guest),
#      RPCRDMA_INTEROP_BUILD_GUEST=1 build here when missing (scripts/test.sh
#      sets it for a full run; default 0: only check),
#      RPCRDMA_INTEROP_BUILD_TIMEOUT (default 420 s for the build)
# exit: 0 a current guest is there, 77 skip (no guest, and why: the guest
#       runs then skip with that reason too; a failed build's last lines are
#       kept in PEER_DIR/build-failed for them to quote)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/harness
export PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}

skip() {
	echo "SKIP: $*"
	exit 77
}
current() { bash "$harness/build-guest.sh" --check; }
if current && command -v qemu-system-x86_64 >/dev/null; then
	echo "guest of this harness version in $PEER_DIR"
	exit 0
fi
[ "${RPCRDMA_INTEROP_BUILD_GUEST:-0}" = 1 ] ||
	skip "no current guest in $PEER_DIR and RPCRDMA_INTEROP_BUILD_GUEST is not 1 (scripts/test.sh sets it; or run tests/interop/harness/build-guest.sh)"
mkdir -p "$PEER_DIR"
echo "[build] building the guest (log $PEER_DIR/build-guest.log)"
t0=$(date +%s)
if timeout "${RPCRDMA_INTEROP_BUILD_TIMEOUT:-420}" bash "$harness/build-guest.sh" \
	>"$PEER_DIR/build-guest.log" 2>&1; then
	rm -f "$PEER_DIR/build-failed"
else
	tail -5 "$PEER_DIR/build-guest.log" >"$PEER_DIR/build-failed"
fi
echo "[build] guest build took $(($(date +%s) - t0)) s"
if [ -s "$PEER_DIR/build-failed" ]; then
	cat "$PEER_DIR/build-failed"
	skip "the guest build failed (log $PEER_DIR/build-guest.log)"
fi
current || skip "the guest build ended but $PEER_DIR holds no current guest"
command -v qemu-system-x86_64 >/dev/null || skip "the guest build did not install qemu-system-x86_64"
echo "guest built in $PEER_DIR"
