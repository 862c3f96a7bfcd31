# Sourced by the tools tests: start an rpcrdma-perf server on kernel-chosen
# ports and set SPID, RPORT (RPC-over-RDMA), TPORT (libtirpc svc_run),
# FPORT (libtirpc fork per connection). Needs PERF and TMP set.
perf_server_start() {
	# Empty the log here first: the redirection below truncates it in the
	# background child, which a loaded machine may run after the loop has
	# read the previous server's ready line (a stale pid) or an empty file
	# (test_tool_perf starts two servers; 12 of 100 starts failed so).
	: >"$TMP/server.log"
	"$PERF" server --port 0 --tcp-port 0 "$@" >"$TMP/server.log" 2>&1 &
	SPID=$!
	# Wait for this server's own ready line (one write, ends in "cpu N"),
	# up to about 30 s: an ASan build on a loaded machine starts slowly.
	i=0
	while ! grep -aq "^rpcrdma-perf server: pid $SPID rdma port .* cpu -*[0-9]" \
		"$TMP/server.log"; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 "$SPID" 2>/dev/null; then
			echo "FAIL: server did not start:"; cat "$TMP/server.log"; exit 1
		fi
		sleep 0.1
	done
	line=$(grep -a "^rpcrdma-perf server: pid $SPID rdma port " "$TMP/server.log")
	RPORT=$(echo "$line" | sed -n 's/.* rdma port \([0-9]*\).*/\1/p')
	TPORT=$(echo "$line" | sed -n 's/.* tcp port \([0-9]*\) (svc_run).*/\1/p')
	FPORT=$(echo "$line" | sed -n 's/.* tcp-fork port \([0-9]*\).*/\1/p')
	spid_line=$(echo "$line" | sed -n 's/.* pid \([0-9]*\) .*/\1/p')
	if [ -z "$RPORT" ] || [ -z "$TPORT" ] || [ -z "$FPORT" ] || [ "$spid_line" != "$SPID" ]; then
		echo "FAIL: cannot parse the server's ready line: $line"; exit 1
	fi
}

perf_server_stop() {
	if [ -n "${SPID:-}" ]; then
		kill -TERM "$SPID" 2>/dev/null
		# a test may have stopped it (SIGSTOP): the TERM stays pending
		# until it runs again, and the wait would never end
		kill -CONT "$SPID" 2>/dev/null
		wait "$SPID"
		rc=$?
		SPID=
		return $rc
	fi
}
