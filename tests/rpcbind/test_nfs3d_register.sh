#!/bin/sh
# rpcrdma-nfs3d --register: while it runs, rpcinfo lists NFS v3 (100003)
# under netid rdma with its RDMA port and MOUNT v3 (100005) under netid
# tcp with its MOUNT port; after SIGTERM neither is left. Run under
# rpcbind_run.sh.
# usage: test_nfs3d_register.sh NFS3D
set -u
NFS3D=$1
TMP=$(mktemp -d)
NPID=
trap '[ -n "$NPID" ] && kill "$NPID" 2>/dev/null; rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; cat "$TMP/log"; exit 1; }

mkdir "$TMP/export"
"$NFS3D" --export "$TMP/export" --port 0 --mount-port 0 --register >"$TMP/log" 2>&1 &
NPID=$!
i=0
until grep -q "^ready nfs=" "$TMP/log"; do
	i=$((i + 1))
	{ [ $i -gt 100 ] || ! kill -0 "$NPID" 2>/dev/null; } && fail "rpcrdma-nfs3d did not start"
	sleep 0.1
done
NPORT=$(sed -n 's/^ready nfs=\([0-9]*\) mount=.*/\1/p' "$TMP/log")
MPORT=$(sed -n 's/^ready nfs=[0-9]* mount=\([0-9]*\)/\1/p' "$TMP/log")
rpcinfo >"$TMP/up" 2>&1 || fail "rpcinfo"
grep -E '^ *10000[35] ' "$TMP/up"
grep -Eq "^ *100003 +3 +rdma +0\.0\.0\.0\.$((NPORT / 256))\.$((NPORT % 256)) " "$TMP/up" ||
	fail "no NFS v3 rdma entry for port $NPORT"
grep -Eq "^ *100005 +3 +tcp +0\.0\.0\.0\.$((MPORT / 256))\.$((MPORT % 256)) " "$TMP/up" ||
	fail "no MOUNT v3 tcp entry for port $MPORT"
kill -TERM "$NPID"
wait "$NPID" || fail "exit status $?"
NPID=
rpcinfo >"$TMP/down" 2>&1 || fail "rpcinfo"
! grep -Eq "^ *100005 +3 +tcp +0\.0\.0\.0\.$((MPORT / 256))\.$((MPORT % 256)) " "$TMP/down" ||
	fail "MOUNT entry left after exit"
! grep -Eq "^ *100003 +3 +rdma " "$TMP/down" || fail "NFS entry left after exit"
echo ok
