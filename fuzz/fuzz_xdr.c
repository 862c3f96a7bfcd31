/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the XDR cursor (RFC 4506). Input layout:
 *   byte 0      piece size: 0 = one flat buffer, else the data is cut into
 *               heap pieces of that many bytes (up to 16 iovecs)
 *   byte 1      k, the number of program bytes
 *   k bytes     the program: decoder ops and their arguments
 *   the rest    the data the program decodes
 *
 * Oracles: every result is 0 or a documented -errno; a failure leaves the
 * position unchanged; every decoded value equals what the flat bytes at
 * that position say (so the iovec paths are checked against plain byte
 * arithmetic); pointers handed out lie inside the data (ASan checks each
 * piece separately). Each decoded item is also re-encoded into a flat
 * cursor and a pieced cursor of the same capacity, which must agree on
 * every result and produce identical bytes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/xdr.h"
#include "util/be.h"
#include "fuzz_assert.h"
#include "fuzz_pieces.h"

static void gather(const struct pieces *p, uint8_t *dst)
{
	for (unsigned i = 0; i < p->n; i++) {
		memcpy(dst, p->iov[i].iov_base, p->iov[i].iov_len);
		dst += p->iov[i].iov_len;
	}
}

static int rc_ok(int rc)
{
	return rc == 0 || rc == -EBADMSG || rc == -E2BIG || rc == -EOVERFLOW || rc == -EINVAL ||
	       rc == -EAGAIN || rc == -EMSGSIZE;
}

/* The two encode cursors: same capacity, flat and pieced. */
struct enc {
	struct rpcrdma_xdr flat, cut;
};

#define ENC(e, call_flat, call_cut)                                                                \
	do {                                                                                       \
		size_t p0 = rpcrdma_xdr_getpos(&(e)->flat);                                        \
		int r1 = (call_flat);                                                              \
		int r2 = (call_cut);                                                               \
		ASSERT(r1 == r2 && rc_ok(r1));                                                     \
		ASSERT(rpcrdma_xdr_getpos(&(e)->flat) == rpcrdma_xdr_getpos(&(e)->cut));           \
		if (r1)                                                                            \
			ASSERT(rpcrdma_xdr_getpos(&(e)->flat) == p0);                              \
	} while (0)

static uint8_t scratch[65536 + 8];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t piece = data[0];
	size_t k = data[1];
	if (size - 2 < k)
		k = size - 2;
	const uint8_t *prog = data + 2;
	const uint8_t *buf = prog + k;
	size_t len = size - 2 - k;

	struct pieces in, outp;
	struct rpcrdma_xdr x;
	struct enc e;
	uint8_t *outflat = malloc(len ? len : 1);
	if (!outflat || make_pieces(&in, buf, len, piece) != 0 ||
	    make_pieces(&outp, NULL, len, piece ? piece : 3) != 0)
		__builtin_trap();
	ASSERT(rpcrdma_xdr_init_iov(&x, in.iov, in.n, RPCRDMA_XDR_DECODE) == 0);
	ASSERT(rpcrdma_xdr_init_iov(&e.cut, outp.iov, outp.n, RPCRDMA_XDR_ENCODE) == 0);
	rpcrdma_xdr_init(&e.flat, outflat, len, RPCRDMA_XDR_ENCODE);
	memset(outflat, 0, len ? len : 1);

	for (size_t i = 0; i < k; i++) {
		uint8_t op = prog[i];
		uint8_t arg = i + 1 < k ? prog[i + 1] : 0;
		size_t pos = rpcrdma_xdr_getpos(&x);
		const uint8_t *at = buf + pos; /* the flat view of the cursor */
		size_t left = len - pos;
		int rc = 0;

		switch (op % 15) {
		case 0: {
			uint32_t v;
			rc = rpcrdma_xdr_get_u32(&x, &v);
			ASSERT(rc == (left >= 4 ? 0 : -EBADMSG));
			if (rc == 0) {
				ASSERT(v == get_be32(at));
				ENC(&e, rpcrdma_xdr_put_u32(&e.flat, v),
				    rpcrdma_xdr_put_u32(&e.cut, v));
			}
			break;
		}
		case 1: {
			int32_t v;
			rc = rpcrdma_xdr_get_i32(&x, &v);
			if (rc == 0) {
				ASSERT((uint32_t)v == get_be32(at));
				ENC(&e, rpcrdma_xdr_put_i32(&e.flat, v),
				    rpcrdma_xdr_put_i32(&e.cut, v));
			}
			break;
		}
		case 2: {
			uint64_t v;
			rc = rpcrdma_xdr_get_u64(&x, &v);
			ASSERT(rc == (left >= 8 ? 0 : -EBADMSG));
			if (rc == 0) {
				ASSERT(v == ((uint64_t)get_be32(at) << 32 | get_be32(at + 4)));
				ENC(&e, rpcrdma_xdr_put_u64(&e.flat, v),
				    rpcrdma_xdr_put_u64(&e.cut, v));
			}
			break;
		}
		case 3: {
			int64_t v;
			rc = rpcrdma_xdr_get_i64(&x, &v);
			if (rc == 0)
				ENC(&e, rpcrdma_xdr_put_i64(&e.flat, v),
				    rpcrdma_xdr_put_i64(&e.cut, v));
			break;
		}
		case 4: {
			bool v;
			rc = rpcrdma_xdr_get_bool(&x, &v);
			if (left >= 4)
				ASSERT(rc == (get_be32(at) <= 1 ? 0 : -EINVAL));
			if (rc == 0) {
				ASSERT(v == (get_be32(at) == 1));
				ENC(&e, rpcrdma_xdr_put_bool(&e.flat, v),
				    rpcrdma_xdr_put_bool(&e.cut, v));
			}
			break;
		}
		case 5: {
			int32_t v;
			rc = rpcrdma_xdr_get_enum(&x, &v);
			if (rc == 0)
				ENC(&e, rpcrdma_xdr_put_enum(&e.flat, v),
				    rpcrdma_xdr_put_enum(&e.cut, v));
			break;
		}
		case 6: {
			uint8_t tmp[256];
			i++;
			rc = rpcrdma_xdr_get_opaque_fixed(&x, tmp, arg);
			ASSERT(rc == (left >= RPCRDMA_XDR_ROUNDUP((size_t)arg) ? 0 : -EBADMSG));
			if (rc == 0) {
				ASSERT(memcmp(tmp, at, arg) == 0);
				ENC(&e, rpcrdma_xdr_put_opaque_fixed(&e.flat, tmp, arg),
				    rpcrdma_xdr_put_opaque_fixed(&e.cut, tmp, arg));
			}
			break;
		}
		case 7: {
			uint8_t tmp[256];
			uint32_t n;
			i++;
			rc = rpcrdma_xdr_get_opaque(&x, tmp, arg, &n);
			if (rc == 0) {
				ASSERT(n <= arg && n == get_be32(at) &&
				       memcmp(tmp, at + 4, n) == 0);
				ASSERT(rpcrdma_xdr_getpos(&x) ==
				       pos + 4 + RPCRDMA_XDR_ROUNDUP((size_t)n));
				ENC(&e, rpcrdma_xdr_put_opaque(&e.flat, tmp, n, arg),
				    rpcrdma_xdr_put_opaque(&e.cut, tmp, n, arg));
			} else if (rc == -E2BIG) {
				ASSERT(left >= 4 && get_be32(at) > arg);
			}
			break;
		}
		case 8: {
			const void *p;
			uint32_t n;
			i++;
			rc = rpcrdma_xdr_get_opaque_ref(&x, (uint32_t)arg * 64u, &p, &n);
			if (rc == 0) {
				ASSERT(n == get_be32(at) && memcmp(p, at + 4, n) == 0);
				ENC(&e, rpcrdma_xdr_put_opaque(&e.flat, p, n, UINT32_MAX),
				    rpcrdma_xdr_put_opaque(&e.cut, p, n, UINT32_MAX));
			}
			break;
		}
		case 9: {
			char s[257];
			i++;
			rc = rpcrdma_xdr_get_string(&x, s, (size_t)arg + 1);
			if (rc == 0) {
				size_t n = strlen(s);
				ASSERT(n == get_be32(at) && n <= arg && memcmp(s, at + 4, n) == 0);
				ENC(&e, rpcrdma_xdr_put_string(&e.flat, s, arg),
				    rpcrdma_xdr_put_string(&e.cut, s, arg));
			}
			break;
		}
		case 10: {
			uint32_t n;
			i++;
			size_t esz = arg & 15u;
			uint32_t max = (uint32_t)(arg >> 4) * 17u;
			rc = rpcrdma_xdr_get_count(&x, max, esz, &n);
			if (rc == 0) {
				ASSERT(n == get_be32(at) && n <= max);
				ASSERT((uint64_t)n * esz <= left - 4);
			}
			break;
		}
		case 11:
			i++;
			rc = rpcrdma_xdr_skip(&x, arg);
			ASSERT(rc == (left >= RPCRDMA_XDR_ROUNDUP((size_t)arg) ? 0 : -EBADMSG));
			break;
		case 12: {
			i++;
			size_t to = (size_t)arg * 4u;
			rc = rpcrdma_xdr_setpos(&x, to);
			ASSERT(rc == (to <= len ? 0 : -EINVAL));
			ASSERT(rpcrdma_xdr_getpos(&x) == (rc ? pos : to));
			break;
		}
		case 13: {
			const void *p;
			i++;
			rc = rpcrdma_xdr_get_inline(&x, arg, &p);
			if (rc == 0)
				ASSERT(memcmp(p, at, arg) == 0);
			break;
		}
		default: {
			/* reserve on the pieced encoder vs the flat one: the flat
			 * one always has the bytes contiguous */
			void *p;
			i++;
			size_t n = (size_t)(arg & 0x3c);
			size_t ep = rpcrdma_xdr_getpos(&e.flat);
			int r1 = rpcrdma_xdr_reserve(&e.flat, n, &p);
			ASSERT(r1 == (n <= len - ep ? 0 : -EMSGSIZE));
			if (r1 == 0) {
				/* fill the reservation, then write the same bytes
				 * again through the normal path on both encoders */
				uint8_t ab[64];
				memset(ab, 0xab, sizeof(ab));
				memset(p, 0xab, n);
				ASSERT(rpcrdma_xdr_setpos(&e.flat, ep) == 0);
				ASSERT(rpcrdma_xdr_put_opaque_fixed(&e.flat, ab, n) == 0);
				ASSERT(rpcrdma_xdr_put_opaque_fixed(&e.cut, ab, n) == 0);
			}
			break;
		}
		}
		ASSERT(rc_ok(rc));
		if (rc)
			ASSERT(rpcrdma_xdr_getpos(&x) == pos);
		ASSERT(rpcrdma_xdr_getpos(&x) + rpcrdma_xdr_remaining(&x) == len);
		ASSERT(rpcrdma_xdr_getpos(&x) % 4 == pos % 4 || op % 15 == 12 || op % 15 == 13);
	}

	/* the two encoders wrote the same bytes */
	size_t n = rpcrdma_xdr_getpos(&e.flat);
	ASSERT(n == rpcrdma_xdr_getpos(&e.cut) && n <= len);
	if (len <= sizeof(scratch)) {
		gather(&outp, scratch);
		ASSERT(memcmp(scratch, outflat, n) == 0);
	}
	free(outflat);
	free_pieces(&in);
	free_pieces(&outp);
	return 0;
}
