/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the NFSv3 argument decoders rpcrdma-nfs3d runs on every call: the
 * routines rpcgen generates from xdr/nfs3.x (issue 37). Input layout:
 *   byte 0      the procedure, modulo 22 (0, NULL, decodes nothing)
 *   the rest    its arguments, decoded over a libtirpc memory stream
 *
 * Oracles: a decoded argument re-encodes into a buffer no longer than
 * what the decoder consumed (shorter only for a string with a NUL
 * inside), and decodes again from there to the same bytes
 * (every bound of xdr/nfs3.x holds both ways); xdr_free releases what
 * decoding allocated, on success and after a failure part way through
 * (LeakSanitizer in sanitizer builds).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/nfs3d/procs.h" /* rpcgen's types, the procedure list */
#include "fuzz_assert.h"

/* the decoders rpcrdma-nfs3d runs, by procedure number (NULL: none) */
static const xdrproc_t xargs[22] = {
#define P(num, NAME, name) [num] = (xdrproc_t)xdr_##NAME##3args,
    NFS3D_PROCS(P)
#undef P
};
_Static_assert(NFS3D_NPROCS == 22, "the procedure byte is taken modulo 22");

/* Decode @len bytes at @p as procedure @proc's arguments into @a: the
 * bytes consumed, or -1. */
static long decode(xdrproc_t xa, const uint8_t *p, size_t len, union nfs3d_args *a)
{
	XDR x;
	memset(a, 0, sizeof(*a));
	xdrmem_create(&x, (char *)(uintptr_t)p, (u_int)len, XDR_DECODE);
	long used = xa(&x, a) ? (long)xdr_getpos(&x) : -1;
	xdr_destroy(&x);
	return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1u << 20)
		return 0;
	xdrproc_t xa = xargs[data[0] % 22];
	if (!xa)
		return 0;
	union nfs3d_args a, b;
	long used = decode(xa, data + 1, size - 1, &a);
	if (used >= 0) {
		uint8_t *enc = malloc(used ? (size_t)used : 1);
		ASSERT(enc);
		XDR x;
		xdrmem_create(&x, (char *)enc, (u_int)used, XDR_ENCODE);
		ASSERT(xa(&x, &a));
		long len = (long)xdr_getpos(&x);
		xdr_destroy(&x);
		/* a bool decodes from any non-zero word and padding is not
		 * checked: not always the same bytes. And a string (a name, a
		 * path) with a NUL inside decodes to the C string before the
		 * NUL, which re-encodes shorter: the server then sees a name a
		 * peer could have sent as it is (no name or path holds a NUL),
		 * nothing more; what was decoded must still encode, and decode
		 * again to itself. */
		ASSERT(len <= used);
		ASSERT(decode(xa, enc, (size_t)len, &b) == len);
		uint8_t *again = malloc(len ? (size_t)len : 1);
		ASSERT(again);
		xdrmem_create(&x, (char *)again, (u_int)len, XDR_ENCODE);
		ASSERT(xa(&x, &b) && (long)xdr_getpos(&x) == len);
		xdr_destroy(&x);
		ASSERT(memcmp(enc, again, (size_t)len) == 0);
		free(again);
		free(enc);
		xdr_free(xa, (char *)&b);
	}
	xdr_free(xa, (char *)&a);
	return 0;
}
