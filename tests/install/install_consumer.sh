#!/bin/sh
# usage: install_consumer.sh BUILD_DIR EXAMPLE.c CC [LIBDIR [COMPONENT]]
# Installs the build into a temporary prefix (COMPONENT only, if given) and
# builds EXAMPLE.c against it as an outside project would, both through
# pkg-config and through find_package(rpcrdma), each statically and
# dynamically; every binary must run. LIBDIR (default lib) is the build's
# CMAKE_INSTALL_LIBDIR: rpcrdma.pc and the CMake package must be found
# there and must point at the installed library and headers.
set -eu
build=$1 src=$2 cc=$3 libdir=${4:-lib} component=${5:-}
top=$(mktemp -d /tmp/rpcrdma-install.XXXXXX)
trap 'rm -rf "$top"' EXIT
prefix=$top/usr
fail() { echo "FAIL: $*"; exit 1; }
if [ -n "$component" ]; then
	cmake --install "$build" --prefix "$prefix" --component "$component" >/dev/null
else
	cmake --install "$build" --prefix "$prefix" >/dev/null
fi
[ -f "$prefix/$libdir/pkgconfig/rpcrdma.pc" ] || fail "rpcrdma.pc not in $libdir/pkgconfig"
[ -f "$prefix/$libdir/cmake/rpcrdma/rpcrdmaConfig.cmake" ] || fail "rpcrdmaConfig.cmake not in $libdir/cmake/rpcrdma"
[ -f "$prefix/$libdir/cmake/rpcrdma/rpcrdmaConfigVersion.cmake" ] || fail "no rpcrdmaConfigVersion.cmake"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
# The variables must resolve to where the files are (a Debian-like libdir
# once gave $prefix/lib/include).
pc_lib=$(cd "$(pkg-config --variable=libdir rpcrdma)" && pwd -P)
pc_inc=$(cd "$(pkg-config --variable=includedir rpcrdma)" && pwd -P)
[ "$pc_lib" = "$(cd "$prefix/$libdir" && pwd -P)" ] || fail "pkg-config libdir is $pc_lib"
[ "$pc_inc" = "$(cd "$prefix/include" && pwd -P)" ] || fail "pkg-config includedir is $pc_inc"
for h in rpcrdma.h rpcrdma/xdr.h rpcrdma/rpc.h rpcrdma/provider.h rpcrdma/client.h rpcrdma/server.h; do
	[ -f "$prefix/include/$h" ] || fail "$h not installed"
done
# Manual pages: a group page, a .so link to it, and (full install) a tool's page.
man=$prefix/share/man
[ -f "$man/man3/rpcrdma_clnt_create.3" ] || fail "man3/rpcrdma_clnt_create.3 not installed"
grep -qx '.so man3/rpcrdma_svc_reply.3' "$man/man3/rpcrdma_svc_req_xid.3" 2>/dev/null ||
	fail "man3/rpcrdma_svc_req_xid.3 is not a link to rpcrdma_svc_reply.3"
if [ -z "$component" ]; then
	[ -f "$man/man1/rpcrdma-ping.1" ] || fail "man1/rpcrdma-ping.1 not installed"
fi
# Only rpcrdma_* symbols may be exported, all under a version node.
so=$prefix/$libdir/librpcrdma.so
bad=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^rpcrdma_' || true)
[ -z "$bad" ] || fail "symbols exported outside the rpcrdma_ prefix: $bad"
objdump -T "$so" | grep -q 'RPCRDMA_0.1 *rpcrdma_version' || fail "rpcrdma_version is not versioned RPCRDMA_0.1"
# The public headers alone must be clean strict C11 (and C++-includable).
printf '#include <rpcrdma.h>\nint main(void) { return rpcrdma_version()[0] == 0; }\n' >"$top/hdr.c"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$top/hdr" "$top/hdr.c" $(pkg-config --cflags --libs rpcrdma) \
	-Wl,-rpath,"$pc_lib"
"$top/hdr" || fail "rpcrdma_version() empty"
# shellcheck disable=SC2046
"$cc" -std=gnu11 -Wall -Werror -o "$top/dyn" "$src" $(pkg-config --cflags --libs rpcrdma) -Wl,-rpath,"$pc_lib"
"$top/dyn" >/dev/null || fail "dynamically linked example (pkg-config) failed"
# shellcheck disable=SC2046
"$cc" -std=gnu11 -Wall -Werror -o "$top/static" "$src" $(pkg-config --cflags rpcrdma) \
	"$pc_lib/librpcrdma.a" $(pkg-config --static --libs-only-l rpcrdma | sed 's/-lrpcrdma//')
"$top/static" >/dev/null || fail "statically linked example (pkg-config) failed"

# find_package(rpcrdma 0.1): the exported targets, shared and static.
mkdir "$top/consumer"
cp "$src" "$top/consumer/example.c"
cat >"$top/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES C)
find_package(rpcrdma 0.1 REQUIRED)
add_executable(dyn example.c)
target_link_libraries(dyn PRIVATE rpcrdma::rpcrdma)
add_executable(sta example.c)
target_link_libraries(sta PRIVATE rpcrdma::rpcrdma_static)
CM
cmake -S "$top/consumer" -B "$top/consumer/b" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_BUILD_RPATH="$prefix/$libdir" >"$top/cm.log" 2>&1 || { cat "$top/cm.log"; fail "find_package(rpcrdma)"; }
cmake --build "$top/consumer/b" >"$top/cmb.log" 2>&1 || { cat "$top/cmb.log"; fail "find_package consumer build"; }
"$top/consumer/b/dyn" >/dev/null || fail "example linked to rpcrdma::rpcrdma failed"
"$top/consumer/b/sta" >/dev/null || fail "example linked to rpcrdma::rpcrdma_static failed"
ldd "$top/consumer/b/dyn" | grep -q "$prefix/$libdir/librpcrdma.so" || fail "dyn does not load the installed librpcrdma.so"
if ldd "$top/consumer/b/sta" | grep -q librpcrdma; then fail "sta loads librpcrdma.so"; fi
echo "install_consumer: $libdir: pkg-config and find_package found, example built and ran (shared and static)"
