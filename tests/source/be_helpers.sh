#!/bin/sh
# usage: be_helpers.sh ROOT
# One byte-order header (issue 37): the .c and .h files under ROOT's src/,
# tests/, fuzz/ and bench/ turn wire bytes into integers and back with
# src/util/be.h only (get_be16/32/64, put_be16/32/64, get_le32, put_le32,
# BE32_BYTES), never with a hand-written helper. Fails, naming file, line
# and rule, on
#   load:   a byte of an array shifted left by 8, 16 or 24 (p[0] << 24 | ...)
#   store:  a byte of an array assigned a value shifted right by 8..56
#           (p[0] = (uint8_t)(v >> 24)), or the initializer form
#           (uint8_t)(v >> 24), (uint8_t)(v >> 16)
#   libc:   ntohl, htonl, ntohs, htons, be32toh and the like, bswap: except
#           on a line about a socket address (INADDR_*, a port) or a
#           verbs field that the verbs API gives in network order
#           (ibv_get_device_guid, imm_data)
#   name:   the definition of a function named like a byte-order helper
#           (be32, get32, put_be16, load64, siwt_be32, ...)
# examples/ and tools/ build against the public headers only and are not
# scanned. Exit 0 pass, 1 fail.
set -eu
root=$1
[ -f "$root/src/util/be.h" ] || { echo "FAIL: no $root/src/util/be.h"; exit 1; }
tmp=$(mktemp -d /tmp/rpcrdma-be.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && for d in src tests fuzz bench; do
	[ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' \)
done | grep -v '^src/util/be\.h$' | LC_ALL=C sort) >"$tmp/files"
[ -s "$tmp/files" ] || { echo "FAIL: no sources under $root"; exit 1; }

# rule NAME ERE [EXCLUDE-ERE]: every line of the files matching ERE (and
# not EXCLUDE-ERE), as "file:line: NAME: text"
rule() {
	(cd "$root" && xargs grep -HnE "$2" <"$tmp/files" || true) |
		{ if [ -n "${3:-}" ]; then grep -vE "$3" || true; else cat; fi; } |
		sed "s/^\([^:]*:[0-9]*\):/\1: $1:/" >>"$tmp/found"
}
: >"$tmp/found"
rule load '\[[^]]*\] *<< *(8|16|24)([^0-9]|$)'
rule store '\] *= *\(uint8_t\) *\(.*>> *8\)'
rule store '>> *24\) *, *\(uint8_t\)'
rule libc '(^|[^a-z_0-9])(ntoh[sl]|hton[sl]|be(16|32|64)toh|htobe(16|32|64)|le(16|32|64)toh|htole(16|32|64)|bswap_(16|32|64)|__builtin_bswap(16|32|64))\(' \
	'INADDR_|sin6?_port|[a-z_]*port\)|ibv_get_device_guid|imm_data'
rule name '^[a-z][a-z_0-9 ]*[ *]([a-z_0-9]*_)?((be|le)(16|32|64)(_[a-z]+)?|(get|put)_?(be|le)?(16|32|64))\('
if [ -s "$tmp/found" ]; then
	echo "FAIL: hand-written byte-order code; use src/util/be.h:"
	cat "$tmp/found"
	exit 1
fi
echo "PASS: $(wc -l <"$tmp/files") files, every byte-order load and store through src/util/be.h"
