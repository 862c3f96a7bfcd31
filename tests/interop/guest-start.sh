#!/bin/bash
# ctest fixture setup of the interop suite (test interop_guest_start): boots
# the QEMU guest (harness/) once for all interop tests and returns when the
# guest's NFS server is ready and the host hook is waiting.
#
# usage: guest-start.sh STATE_DIR
#   STATE_DIR        per-build directory; the tests read STATE_DIR/guest-ready
#                    (ports) or STATE_DIR/skip (why there is no guest)
# env: PEER_DIR (default /tmp/rpcrdma-guest, where harness/build-guest.sh
#      put the guest; an image of another harness version counts as not built),
#      INTEROP_BOOT_TIMEOUT (default 300 s to guest-ready). The guest is
#      built before, by guest-build.sh (the fixture interop_guest_build)
#      when RPCRDMA_INTEROP_BUILD_GUEST=1.
# exit: 0 guest up, 77 skip (no guest on this machine: every interop test
#       then skips with the same reason), 1 failure (guest built but broken).
set -uo pipefail
state=${1:?usage: guest-start.sh STATE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/harness
export PEER_DIR=${PEER_DIR:-/tmp/rpcrdma-guest}
boot_timeout=${INTEROP_BOOT_TIMEOUT:-300}

# A guest left over from an interrupted run of this build dir: end it
# (only the process group we started, recorded in our own pid file).
if [ -f "$state/pid" ]; then
	old=$(cat "$state/pid")
	kill -0 "$old" 2>/dev/null && kill -- -"$old" 2>/dev/null
fi
rm -rf "$state"
mkdir -p "$state"

skip() {
	printf '%s\n' "$*" >"$state/skip"
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}

# The guest itself is built (or not) by the fixture interop_guest_build
# (guest-build.sh), which runs before both guest runs.
guest_current() {
	bash "$harness/build-guest.sh" --check
}
why=""
[ -s "$PEER_DIR/build-failed" ] && why=" (last build attempt failed: $(tr '\n' ' ' <"$PEER_DIR/build-failed" | cut -c1-300))"

command -v qemu-system-x86_64 >/dev/null ||
	skip "guest not built: run scripts/interop.sh (qemu-system-x86_64 is not installed)$why"
guest_current ||
	skip "guest not built: run scripts/interop.sh (no guest of this harness version in $PEER_DIR)$why"
[ -e /dev/kvm ] || echo "note: no /dev/kvm, the guest runs under TCG emulation"

# Two free host ports: the NFS/RDMA forward and the mountd forward.
free_port() {
	local p
	for _ in $(seq 1 100); do
		# below Linux's ephemeral range (32768-60999) and the range the
		# softiwarp wire test draws from (20000-31999)
		p=$((12000 + RANDOM % 8000))
		ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . && continue
		[ "$p" = "${1:-}" ] && continue
		echo "$p"
		return 0
	done
	return 1
}
rport=$(free_port) || fail "no free port"
mport=$(free_port "$rport") || fail "no free port"
name=interop-$(printf '%s' "$state" | md5sum | cut -c1-8)
# test_interop_nfs3d: the guest's kernel NFS client reaches rpcrdma-nfs3d on
# the host as 10.0.2.100 (NFS/RDMA 20049, MOUNT tcp 20048) through guestfwd
# rules; socat carries each guest connection to the host ports in
# STATE/nfs3d-ports. Without socat the test skips.
nfs3d_fwd=""
if command -v socat >/dev/null; then
	nport=$(free_port "$rport") && nmport=$(free_port "$nport") || fail "no free port"
	while [ "$nport" = "$mport" ] || [ "$nmport" = "$mport" ] || [ "$nmport" = "$rport" ]; do
		nport=$(free_port "$rport") && nmport=$(free_port "$nport") || fail "no free port"
	done
	nfs3d_fwd=",guestfwd=tcp:10.0.2.100:20049-cmd:$here/nfs3d-fwd.sh $nport"
	nfs3d_fwd+=",guestfwd=tcp:10.0.2.100:20048-cmd:$here/nfs3d-fwd.sh $nmport"
fi

echo "[start] guest $PEER_DIR, share $PEER_DIR/runs/$name, ports rdma $rport mountd $mport"
[ -n "$nfs3d_fwd" ] && printf 'NFS3D_PORT=%s\nNFS3D_MOUNT_PORT=%s\n' "$nport" "$nmport" >"$state/nfs3d-ports"
date +%s.%N >"$state/t-start"
# The guest runs in its own session so ctest does not wait for it (no
# inherited stdout) and guest-stop.sh can end exactly this process group.
# shellcheck disable=SC2016 # expanded by the inner bash: $0 is the state dir
setsid bash -c 'echo $$ >"$0/pid"; "$@"; echo $? >"$0/run-guest.rc"' \
	"$state" env HOSTFWD_PORT="$rport" \
	HOSTFWD_EXTRA=",hostfwd=tcp:127.0.0.1:$mport-10.0.2.15:20048$nfs3d_fwd" \
	HOST_HOOK="$here/host-hook.sh" INTEROP_STATE="$state" INTEROP_MOUNT_PORT="$mport" \
	INTEROP_HOOK_WAIT=1500 \
	NAME="$name" TIMEOUT=1800 GUEST_ENV="INTEROP_WAIT=1550" \
	"$harness/run-guest.sh" "$here/guest/nfs-server.sh" "$state/out" \
	>"$state/run-guest.log" 2>&1 </dev/null &

for _ in $(seq 1 $((boot_timeout * 5))); do
	[ -e "$state/guest-ready" ] && break
	if [ -e "$state/run-guest.rc" ]; then
		cat "$state/run-guest.log"
		tail -30 "$state/out/serial.log" 2>/dev/null
		fail "the guest ended before its NFS server was ready"
	fi
	sleep 0.2
done
if [ ! -e "$state/guest-ready" ]; then
	tail -30 "$PEER_DIR/runs/$name/serial.log" 2>/dev/null
	kill -- -"$(cat "$state/pid")" 2>/dev/null
	fail "guest not ready after ${boot_timeout}s (guest stopped)"
fi
t=$(echo "$(date +%s.%N) - $(cat "$state/t-start")" | bc)
echo "$t" >"$state/t-ready"
cat "$state/run-guest.log"
cat "$state/guest-ready"
echo "[start] guest NFS server ready after $t s (boot + nfsd start, host wall clock)"
