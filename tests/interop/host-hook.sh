#!/bin/bash
# HOST_HOOK for harness/run-guest.sh: runs on the host once the guest's
# kernel NFS server is ready (guest/nfs-server.sh touched ready-host). When
# this script ends, run-guest.sh creates /peer/host-done and the guest
# stops its capture and powers off.
#
# Two modes:
#   INTEROP_STATE=DIR (ctest, set by guest-start.sh): write DIR/guest-ready
#       with the forwarded ports, then wait until DIR/tests-done appears
#       (guest-stop.sh) or INTEROP_HOOK_WAIT seconds pass; ctest runs the
#       test programs in between, one test each.
#   INTEROP_BIN=DIR (by hand): run every DIR/test_interop_* program now,
#       in order, and report each one's exit status.
# run-guest.sh passes HOSTFWD_PORT (-> guest 20049, NFS/RDMA); the mountd
# forward's host port comes in INTEROP_MOUNT_PORT.
set -u
port=${HOSTFWD_PORT:?}
mport=${INTEROP_MOUNT_PORT:?}
echo "[hook] guest ready: nfs/rdma 127.0.0.1:$port, mountd 127.0.0.1:$mport"
if [ -n "${INTEROP_STATE:-}" ]; then
	tmp=$INTEROP_STATE/guest-ready.tmp
	printf 'RDMA_PORT=%s\nMOUNT_PORT=%s\nGUEST_OUT=%s\n' "$port" "$mport" "${OUT:-}" >"$tmp"
	mv "$tmp" "$INTEROP_STATE/guest-ready"
	wait=${INTEROP_HOOK_WAIT:-600}
	i=0
	while [ ! -e "$INTEROP_STATE/tests-done" ] && [ $i -lt $((wait * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ -e "$INTEROP_STATE/tests-done" ] || echo "[hook] no tests-done after ${wait}s: letting the guest go"
	exit 0
fi
rc=0
for t in "${INTEROP_BIN:?INTEROP_STATE or INTEROP_BIN must be set}"/test_interop_*; do
	[ -x "$t" ] || continue
	s=$(date +%s.%N)
	RPCRDMA_INTEROP_RDMA_PORT=$port RPCRDMA_INTEROP_MOUNT_PORT=$mport \
		RPCRDMA_INTEROP_GUEST_OUT=${OUT:-} "$t"
	r=$?
	echo "[hook] $(basename "$t"): exit $r ($(echo "$(date +%s.%N) - $s" | bc) s)"
	[ $r -eq 0 ] || [ $r -eq 77 ] || rc=1
done
exit $rc
