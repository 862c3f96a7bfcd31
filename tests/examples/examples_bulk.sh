#!/bin/sh
# usage: examples_bulk.sh BUILD_DIR EXAMPLE_DIR
# Installs the build into a scratch prefix, builds examples/bulk there with
# its Makefile (installed headers and pkg-config only), then runs each
# client against its server: RPC-over-RDMA and the TCP twins. Each client
# checks the bulk data's checksum both ways (PUT: the server's checksum of
# what it received; GET: ours of what came back).
set -u
build=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v make >/dev/null 2>&1 || { echo "SKIP: make not installed"; exit 77; }
command -v rpcgen >/dev/null 2>&1 || { echo "SKIP: rpcgen not installed"; exit 77; }
tmp=$(mktemp -d /tmp/rpcrdma-examples.XXXXXX)
SPID=
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null || fail "cmake --install"
pc=$(find "$tmp/prefix" -name rpcrdma.pc | head -1)
[ -n "$pc" ] || fail "rpcrdma.pc not installed"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir rpcrdma)
cp -r "$src" "$tmp/bulk"
make -C "$tmp/bulk" CFLAGS="-O2 -g -Wall -Werror" LDFLAGS="-Wl,-rpath,$libdir" >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log"; fail "make"; }

# run_pair SERVER CLIENT BYTES: the client's exit status must be 0 and
# both checksum lines "ok"
run_pair() {
	: >"$tmp/srv.out"
	"$tmp/bulk/$1" 0 >"$tmp/srv.out" 2>&1 &
	SPID=$!
	i=0
	until grep -q '^ready [0-9]' "$tmp/srv.out"; do
		i=$((i + 1))
		[ $i -le 300 ] && kill -0 "$SPID" 2>/dev/null || { cat "$tmp/srv.out"; fail "$1 did not start"; }
		sleep 0.1
	done
	port=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$tmp/srv.out")
	"$tmp/bulk/$2" 127.0.0.1 "$port" "$3" >"$tmp/cli.out" 2>&1
	rc=$?
	cat "$tmp/cli.out"
	kill -TERM "$SPID"
	wait "$SPID"
	SPID=
	[ $rc -eq 0 ] || fail "$2: exit status $rc"
	[ "$(grep -c ': ok$' "$tmp/cli.out")" -eq 2 ] || fail "$2: checksums"
	grep -q "^PUT $3 bytes" "$tmp/cli.out" && grep -q "^GET $3 bytes: got $3," "$tmp/cli.out" ||
		fail "$2: sizes"
}
for n in 524288 100; do
	run_pair bulk_server bulk_client $n
	run_pair bulk_server_tcp bulk_client_tcp $n
done
echo "examples_bulk: built against the install, RDMA and TCP twins agree"
