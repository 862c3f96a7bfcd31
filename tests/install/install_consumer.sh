#!/bin/sh
# usage: install_consumer.sh BUILD_DIR EXAMPLE.c CC
# Installs the build into a temporary prefix and builds EXAMPLE.c against it
# through pkg-config, statically and dynamically; both binaries must run.
set -eu
build=$1 src=$2 cc=$3
prefix=$(mktemp -d /tmp/rpcrdma-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name rpcrdma.pc | head -1)")
[ -n "$libdir" ] || { echo "FAIL: rpcrdma.pc not installed"; exit 1; }
export PKG_CONFIG_PATH="$libdir"
for h in rpcrdma.h rpcrdma/xdr.h rpcrdma/rpc.h rpcrdma/provider.h rpcrdma/client.h rpcrdma/server.h; do
	[ -f "$prefix/include/$h" ] || { echo "FAIL: $h not installed"; exit 1; }
done
# Only rpcrdma_* symbols may be exported, all under a version node.
bad=$(nm -D --defined-only "$prefix"/lib*/librpcrdma.so | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^rpcrdma_' || true)
[ -z "$bad" ] || { echo "FAIL: symbols exported outside the rpcrdma_ prefix: $bad"; exit 1; }
objdump -T "$prefix"/lib*/librpcrdma.so | grep -q 'RPCRDMA_0.1 *rpcrdma_version' ||
	{ echo "FAIL: rpcrdma_version is not versioned RPCRDMA_0.1"; exit 1; }
# The public headers alone must be clean strict C11 (and C++-includable).
printf '#include <rpcrdma.h>\nint main(void) { return rpcrdma_version()[0] == 0; }\n' >"$prefix/hdr.c"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$prefix/hdr" "$prefix/hdr.c" $(pkg-config --cflags --libs rpcrdma) \
	-Wl,-rpath,"$(pkg-config --variable=libdir rpcrdma)"
"$prefix/hdr" || { echo "FAIL: rpcrdma_version() empty"; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=gnu11 -Wall -Werror -o "$prefix/dyn" "$src" $(pkg-config --cflags --libs rpcrdma) \
	-Wl,-rpath,"$(pkg-config --variable=libdir rpcrdma)"
"$prefix/dyn" >/dev/null || { echo "FAIL: dynamically linked example failed"; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=gnu11 -Wall -Werror -o "$prefix/static" "$src" $(pkg-config --cflags rpcrdma) \
	"$(pkg-config --variable=libdir rpcrdma)/librpcrdma.a" $(pkg-config --static --libs-only-l rpcrdma | sed 's/-lrpcrdma//')
"$prefix/static" >/dev/null || { echo "FAIL: statically linked example failed"; exit 1; }
echo "install_consumer: installed, pkg-config found, example built and ran (shared and static)"
