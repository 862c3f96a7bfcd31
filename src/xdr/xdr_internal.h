/* SPDX-License-Identifier: MIT */
/*
 * Library-internal XDR cursor fast paths. Layers inside librpcrdma (rpc,
 * transport) may include this to get the inline versions of the hot
 * encoders/decoders; the public functions in xdr.h are thin wrappers.
 */
#ifndef RPCRDMA_XDR_INTERNAL_H
#define RPCRDMA_XDR_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rpcrdma/xdr.h"
#include "util/be.h"

#define XDR_LIKELY(c) __builtin_expect(!!(c), 1)

/* A saved cursor position, to undo a partly decoded item. */
struct xdri_mark {
	unsigned int idx;
	size_t off;
	size_t pos;
};

static inline struct xdri_mark xdri_mark(const struct rpcrdma_xdr *x)
{
	struct xdri_mark m = {x->idx, x->off, x->pos};
	return m;
}

static inline void xdri_restore(struct rpcrdma_xdr *x, struct xdri_mark m)
{
	x->idx = m.idx;
	x->off = m.off;
	x->pos = m.pos;
}

/* The fast path, in two steps so the common case is one compare: do the
 * next @n (> 0) bytes lie wholly inside the current iovec? */
static inline bool xdri_fits(const struct rpcrdma_xdr *x, size_t n)
{
	return x->iov[x->idx].iov_len - x->off >= n;
}

/* ... then step over them (only after xdri_fits said yes) and return where
 * they are. */
static inline uint8_t *xdri_take(struct rpcrdma_xdr *x, size_t n)
{
	uint8_t *p = (uint8_t *)x->iov[x->idx].iov_base + x->off;
	x->off += n;
	x->pos += n;
	return p;
}

/* Out of line (xdr.c): items that straddle iovecs. -EMSGSIZE / -EBADMSG
 * when fewer than @n bytes remain; the cursor is then unchanged. */
int rpcrdma_xdri_put_slow(struct rpcrdma_xdr *x, const void *src, size_t n);
int rpcrdma_xdri_get_slow(struct rpcrdma_xdr *x, void *dst, size_t n);
/* Step over used-up iovecs so idx names the one holding the next byte. */
void rpcrdma_xdri_normalize(struct rpcrdma_xdr *x);

static inline int xdri_put_u32_inline(struct rpcrdma_xdr *x, uint32_t v)
{
	if (XDR_LIKELY(xdri_fits(x, 4))) {
		put_be32(xdri_take(x, 4), v);
		return 0;
	}
	uint8_t b[4];
	put_be32(b, v);
	return rpcrdma_xdri_put_slow(x, b, 4);
}

static inline int xdri_get_u32_inline(struct rpcrdma_xdr *x, uint32_t *v)
{
	if (XDR_LIKELY(xdri_fits(x, 4))) {
		*v = get_be32(xdri_take(x, 4));
		return 0;
	}
	uint8_t b[4];
	int rc = rpcrdma_xdri_get_slow(x, b, 4);
	if (rc)
		return rc;
	*v = get_be32(b);
	return 0;
}

#endif
