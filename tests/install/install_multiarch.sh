#!/bin/sh
# usage: install_multiarch.sh BUILD_DIR SOURCE_DIR EXAMPLE.c CC BUILD_TYPE
# The install with Debian's multiarch libdir under /usr
# (-DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu, as dh_auto_configure
# passes it): a second configure of the sources with that libdir, given
# the libraries BUILD_DIR already built (the same binaries: only the
# install layout, rpcrdma.pc and the CMake package differ), installed
# (component "lib") and consumed by install_consumer.sh through pkg-config
# and find_package.
set -eu
build=$1 srcdir=$2 example=$3 cc=$4 btype=$5
b=$(mktemp -d /tmp/rpcrdma-multiarch.XXXXXX)
trap 'rm -rf "$b"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$srcdir" -B "$b" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$btype" \
	-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu \
	-DRPCRDMA_BUILD_TESTS=OFF -DRPCRDMA_BUILD_BENCH=OFF >"$b/configure.log" 2>&1 ||
	{ cat "$b/configure.log"; fail "configure"; }
grep -qx 'libdir=${prefix}/lib/x86_64-linux-gnu' "$b/rpcrdma.pc" || { cat "$b/rpcrdma.pc"; fail "libdir line"; }
grep -qx 'prefix=${pcfiledir}/../../..' "$b/rpcrdma.pc" || { cat "$b/rpcrdma.pc"; fail "prefix line"; }
cp -P "$build"/src/librpcrdma.so* "$build"/src/librpcrdma.a "$b/src/"
sh "$(dirname "$0")/install_consumer.sh" "$b" "$example" "$cc" lib/x86_64-linux-gnu lib
