#!/bin/sh
# rpcrdma-nfs3d's command line: -h and --help print the usage on stdout
# and exit 0; --version prints the library version and exits 0; a bad
# option prints the usage on stderr and exits 2.
# usage: test_nfs3d_cli.sh NFS3D VERSION
set -u
NFS3D=$1
VERSION=$2
fail() { echo "FAIL: $*"; exit 1; }
for h in -h --help; do
	out=$("$NFS3D" $h 2>/dev/null) || fail "$h: exit status $?"
	echo "$out" | grep -q "^usage: rpcrdma-nfs3d --export DIR" || fail "$h: no usage on stdout"
	echo "$out" | grep -q -- "--register" || fail "$h: --register not described"
done
out=$("$NFS3D" --version) || fail "--version: exit status $?"
[ "$out" = "rpcrdma-nfs3d (rpcrdma) $VERSION" ] || fail "--version printed '$out'"
"$NFS3D" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad option: exit status not 2"
[ -z "$("$NFS3D" --no-such-option 2>/dev/null)" ] || fail "bad option: usage on stdout"
echo ok
