#!/bin/sh
# The tools' command-line habits and error reports (issue 19):
#  - -h and --help print the usage on stdout and exit 0; --version prints
#    the library version;
#  - rpcrdma-ping names what it found when the peer is not an
#    RPC-over-RDMA server (an HTTP server, an ONC RPC TCP server, other
#    bytes) and an unknown provider; prints a hex program number as given;
#  - rpcrdma-perf prints no row of figures for a case that could not
#    connect (the error instead, exit 1), draws no \r progress line when
#    stderr is not a terminal (and does when it is), and its server
#    listens on --bind ADDR only.
# usage: test_tool_cli.sh PING PERF VERSION FAKE_PEER.py
set -u
PING=$1 PERF=$2 VERSION=$3 FAKE=$4
TMP=$(mktemp -d)
FPID=
. "$(dirname "$0")/server_start.sh"
cleanup() {
	perf_server_stop
	[ -z "$FPID" ] || { kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null; }
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }

# --- help and version ---
for tool in "$PING" "$PERF"; do
	for h in -h --help; do
		"$tool" $h >"$TMP/h.out" 2>"$TMP/h.err" || fail "$tool $h: exit status $?"
		grep -q "^usage: rpcrdma-" "$TMP/h.out" || fail "$tool $h: no usage on stdout"
		[ ! -s "$TMP/h.err" ] || fail "$tool $h wrote to stderr"
	done
	"$tool" --version >"$TMP/v.out" 2>&1 || fail "$tool --version: exit status $?"
	grep -qx "rpcrdma-p[a-z]* (rpcrdma) $VERSION" "$TMP/v.out" || fail "$tool --version: $(cat "$TMP/v.out")"
done
"$PING" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "ping: unknown option must exit 2"

# --- peers that are not RPC-over-RDMA servers ---
# expect_peer MODE TEXT: ping a fake peer of MODE; exit 1 and TEXT on stderr
expect_peer() {
	python3 "$FAKE" "$1" >"$TMP/fake.port" &
	FPID=$!
	i=0
	while [ ! -s "$TMP/fake.port" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || fail "fake $1 peer did not start"
		sleep 0.1
	done
	"$PING" 127.0.0.1 -p "$(cat "$TMP/fake.port")" -w 5 >"$TMP/peer.out" 2>&1
	rc=$?
	kill "$FPID"
	wait "$FPID" 2>/dev/null
	FPID=
	: >"$TMP/fake.port"
	cat "$TMP/peer.out"
	[ $rc -eq 1 ] || fail "$1 peer: exit status $rc, want 1"
	grep -qF "$2" "$TMP/peer.out" || fail "$1 peer: no '$2'"
}
expect_peer http "peer is an HTTP server, not an RPC-over-RDMA server (MPA handshake failed)"
expect_peer rpc "peer is an ONC RPC server over TCP, not RPC-over-RDMA (MPA handshake failed)"
expect_peer garbage "peer is not an RPC-over-RDMA server (MPA handshake failed)"

# --- unknown provider, unknown host ---
RPCRDMA_PROVIDER=no-such-provider "$PING" 127.0.0.1 -w 1 >"$TMP/prov.out" 2>&1
rc=$?
cat "$TMP/prov.out"
[ $rc -eq 1 ] || fail "unknown provider: exit status $rc"
grep -q "unknown RDMA provider 'no-such-provider'" "$TMP/prov.out" || fail "unknown provider message"
"$PING" no-such-host.invalid -w 1 >"$TMP/host.out" 2>&1
grep -q "no-such-host.invalid: unknown host" "$TMP/host.out" || fail "unknown host: $(cat "$TMP/host.out")"

# --- a server: hex program numbers, --bind ---
perf_server_start --bind 127.0.0.2
grep -q " bind 127.0.0.2$" "$TMP/server.log" || fail "ready line lacks the bind address"
"$PING" 127.0.0.2 -p "$RPORT" -P 0x20049001 >"$TMP/hex.out" 2>&1 || { cat "$TMP/hex.out"; fail "ping 127.0.0.2"; }
cat "$TMP/hex.out"
grep -q "^RPCRDMA-PING 127.0.0.2 port $RPORT program 0x20049001 version 1: connected" "$TMP/hex.out" ||
	fail "hex program not printed as given (header)"
grep -q "^program 0x20049001 version 1 ready and waiting" "$TMP/hex.out" || fail "hex program not printed as given"
"$PING" 127.0.0.2 -p "$RPORT" -P 0x186a3 -V 3 >"$TMP/hex2.out" 2>&1
grep -q "program 0x186a3 version 3 is not available" "$TMP/hex2.out" || fail "hex program in the error: $(cat "$TMP/hex2.out")"
# a real ONC RPC TCP server (libtirpc svc_run, the fork model too) closes
# on our MPA request without a byte
for p in "$TPORT" "$FPORT"; do
	"$PING" 127.0.0.2 -p "$p" -w 5 >"$TMP/tirpc.out" 2>&1
	rc=$?
	cat "$TMP/tirpc.out"
	[ $rc -eq 1 ] || fail "libtirpc port: exit status $rc"
	grep -qF "peer is not an RPC-over-RDMA server (MPA handshake failed)" "$TMP/tirpc.out" ||
		fail "libtirpc port: no 'not an RPC-over-RDMA server'"
done
# bound to 127.0.0.2 only: nothing listens on 127.0.0.1 at that port
"$PING" 127.0.0.1 -p "$RPORT" -w 2 >"$TMP/bind.out" 2>&1
grep -q "connection refused" "$TMP/bind.out" || fail "--bind: 127.0.0.1 answered: $(cat "$TMP/bind.out")"

# --- perf client: no progress line unless stderr is a terminal ---
C="$PERF client 127.0.0.2 --port $RPORT --peer rdma --workload null"
$C --duration 1.5 --warmup 0 >"$TMP/np.out" 2>"$TMP/np.err" || { cat "$TMP/np.err"; fail "client run"; }
if tr -d '\n' <"$TMP/np.err" | grep -q "$(printf '\r')"; then fail "progress line drawn on a non-terminal"; fi
if command -v script >/dev/null 2>&1; then
	script -qec "$C --duration 1.5 --warmup 0 >/dev/null" "$TMP/tty.log" >/dev/null 2>&1 </dev/null ||
		fail "client run on a terminal"
	grep -q "calls/s" "$TMP/tty.log" || fail "no progress line on a terminal"
fi
perf_server_stop || fail "server exit status $?"

# --- perf client: a case that cannot connect prints the error, not zeros ---
$PERF client 127.0.0.2 --port "$RPORT" --peer rdma --workload null --count 5 \
	--csv "$TMP/refused.csv" >"$TMP/refused.out" 2>"$TMP/refused.err"
rc=$?
cat "$TMP/refused.out" "$TMP/refused.err"
[ $rc -eq 1 ] || fail "refused run: exit status $rc, want 1"
grep -q "rdma null .* failed: connect: connection refused" "$TMP/refused.err" || fail "no connect error"
[ ! -s "$TMP/refused.out" ] || fail "figures printed for a case that never ran"
[ ! -e "$TMP/refused.csv" ] || fail "CSV written for a case that never ran"
echo ok
