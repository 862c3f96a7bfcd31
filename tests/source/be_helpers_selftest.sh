#!/bin/sh
# usage: be_helpers_selftest.sh BE_HELPERS_SH
# be_helpers.sh on made-up trees: each way of writing a byte-order helper
# by hand fails it (in src/, tests/, fuzz/ and bench/), what is not one
# passes (be.h's own calls, socket addresses, a PRNG byte, a CRC table
# step, a wr_id, a host-order load). Exit 0 pass, 1 fail.
set -eu
check=$1
tmp=$(mktemp -d /tmp/rpcrdma-be-self.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# tree DIR: a fresh tree with be.h and one file of each kind that passes
tree() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/src/util" "$tmp/t/tests" "$tmp/t/fuzz" "$tmp/t/bench"
	printf 'static inline uint32_t get_be32(const void *p) { return 0; }\n' >"$tmp/t/src/util/be.h"
	cat >"$tmp/t/src/ok.c" <<'OK'
#include "util/be.h"
static uint32_t hdr_xid(const uint8_t *p)
{
	return get_be32(p);
}
static void addr(struct sockaddr_in *sin, uint16_t port)
{
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
	uint16_t q = ntohs(sin->sin_port);
	out->imm_data = ntohl(in->imm_data);
}
static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static uint64_t wr_id(uint32_t kind, uint32_t idx)
{
	return ((uint64_t)kind << 24) | idx;
}
static void fill(uint8_t *p, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(x >> 24);
	crc = (crc << 8) ^ table[(crc >> 24) ^ b[i]];
	mr->stag = idx << 8 | (uint8_t)(dev->key_seed >> 16);
}
OK
}
# expect pass|fail WHAT: run the checker on the tree
expect() {
	if sh "$check" "$tmp/t" >"$tmp/out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" != "$1" ]; then
		echo "FAIL: $2: expected $1, got $got"
		sed 's/^/  | /' "$tmp/out"
		fail=1
	fi
}
# bad DIR WHAT LINE...: a file in DIR with the lines fails the check
bad() {
	d=$1 what=$2
	shift 2
	tree
	printf '%s\n' "$@" >"$tmp/t/$d/bad.c"
	expect fail "$what in $d"
}

tree
expect pass "a clean tree"
bad src "shift-or load" '	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];'
bad tests "16-bit load" '	n = (uint16_t)(b[18] << 8 | b[19]);'
bad fuzz "little-endian load" '	v = (uint32_t)c[0] | (uint32_t)c[1] << 8;'
bad bench "byte store" '	p[2] = (uint8_t)(v >> 8);'
bad tests "appending store" '	buf[len++] = (uint8_t)(v >> 8);'
bad tests "initializer bytes" '#define W(v) (uint8_t)((v) >> 24), (uint8_t)((v) >> 16), (uint8_t)((v) >> 8), (uint8_t)(v)'
bad src "ntohl of a copied word" '	return ntohl(v);'
bad tests "htonl into a buffer" '		uint32_t v = htonl(w[i]);'
bad src "be32toh" '	return be32toh(v);'
bad src "bswap builtin" '	return __builtin_bswap32(v);'
bad fuzz "helper named get16" 'static uint16_t get16(const uint8_t *p)' '{' '	uint16_t v = 0;' '	return v;' '}'
bad tests "helper named be32_at" 'static uint32_t be32_at(const uint8_t *p)' '{' '}'
bad tests "helper named siwt_be64" 'void siwt_be64(uint8_t *p, uint64_t v);'
bad src "helper named xdri_load_be32" 'static inline uint32_t xdri_load_be32(const uint8_t *p)' '{' '}'
# the header itself may do all of this
tree
printf 'static inline uint32_t get_be32(const void *p) { return __builtin_bswap32(0); }\n' >>"$tmp/t/src/util/be.h"
expect pass "be.h itself"
# examples/ and tools/ are not scanned (public headers only)
tree
mkdir -p "$tmp/t/examples" "$tmp/t/tools"
printf 'static uint32_t be32(const uint8_t *p)\n{\n}\n' >"$tmp/t/examples/e.c"
printf 'static uint32_t be32(const uint8_t *p)\n{\n}\n' >"$tmp/t/tools/t.c"
expect pass "examples/ and tools/"
[ $fail = 0 ] && echo "PASS: be_helpers.sh self-test"
exit $fail
