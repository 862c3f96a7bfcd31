# Sourced by the tools tests: start an rpcrdma-perf server on kernel-chosen
# ports and set SPID, RPORT (RPC-over-RDMA), TPORT (libtirpc svc_run),
# FPORT (libtirpc fork per connection). Needs PERF and TMP set.
perf_server_start() {
	"$PERF" server --port 0 --tcp-port 0 "$@" >"$TMP/server.log" 2>&1 &
	SPID=$!
	i=0
	while ! grep -q "rdma port" "$TMP/server.log" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$SPID" 2>/dev/null; then
			echo "FAIL: server did not start:"; cat "$TMP/server.log"; exit 1
		fi
		sleep 0.1
	done
	line=$(grep "rdma port" "$TMP/server.log")
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
		wait "$SPID"
		rc=$?
		SPID=
		return $rc
	fi
}
