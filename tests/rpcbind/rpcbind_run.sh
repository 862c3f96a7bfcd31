#!/bin/sh
# usage: rpcbind_run.sh COMMAND [ARG...]
# Runs COMMAND with Debian's rpcbind answering on this host: the one already
# running if there is one, else one started here in the foreground (needs
# root: it binds port 111 and /run/rpcbind.sock) and stopped afterwards.
# Exit status: COMMAND's, or 77 (skip) with the reason when no rpcbind can
# run. The tests using it hold the ctest resource lock "rpcbind".
set -u
command -v rpcinfo >/dev/null 2>&1 || { echo "SKIP: rpcinfo not installed (package rpcbind)"; exit 77; }
RPCB_PID=
if ! rpcinfo >/dev/null 2>&1; then
	command -v rpcbind >/dev/null 2>&1 || { echo "SKIP: rpcbind not installed"; exit 77; }
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: no rpcbind running and starting one needs root"; exit 77; }
	# -f: stay in the foreground, so this script owns the process. No -w:
	# a warm start would bring back entries from an earlier run.
	rpcbind -f &
	RPCB_PID=$!
	i=0
	until rpcinfo >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 50 ] || ! kill -0 "$RPCB_PID" 2>/dev/null; then
			echo "SKIP: rpcbind did not start (port 111 or /run/rpcbind.sock taken?)"
			kill "$RPCB_PID" 2>/dev/null
			exit 77
		fi
		sleep 0.1
	done
	echo "rpcbind_run: started rpcbind, pid $RPCB_PID"
else
	echo "rpcbind_run: using the rpcbind already running"
fi
"$@"
rc=$?
if [ -n "$RPCB_PID" ]; then
	kill -TERM "$RPCB_PID"
	wait "$RPCB_PID"
fi
exit $rc
