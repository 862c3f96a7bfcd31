/* SPDX-License-Identifier: MIT */
/*
 * XDR (RFC 4506) cursors over a flat buffer or a list of iovecs.
 *
 * The cursor keeps (idx, off) = where the next byte goes/comes from and pos =
 * bytes before it. The fast path handles an item that lies wholly inside the
 * current iovec with one bounds check and a memcpy of a constant size; the
 * slow path (item straddles iovecs, or the current iovec is used up) walks
 * the list. Neither dispatches through a function pointer.
 *
 * Failure rule (include/rpcrdma/xdr.h): every function checks that the whole
 * item fits before it moves anything, or saves the position and restores it,
 * so a failed call leaves (idx, off, pos) exactly as they were.
 */
#include "rpcrdma/xdr.h"

#include <errno.h>
#include <string.h>

#include "xdr/xdr_internal.h"

static const uint8_t xdri_zero_pad[RPCRDMA_XDR_UNIT];
/* What a zero-length opaque_ref/inline points at: never NULL, never read. */
static const uint8_t xdri_empty[1];
/* What a zero-length reservation points at: never NULL, never written. */
static uint8_t xdri_empty_rw[1];

void rpcrdma_xdr_init(struct rpcrdma_xdr *x, void *buf, size_t len, enum rpcrdma_xdr_op op)
{
	/* Field by field, not a memset of the whole cursor: only iov[0] of
	 * its RPCRDMA_XDR_MAX_IOV is ever read (idx < iovcnt), and every RPC
	 * header is encoded or decoded through one of these (issue 38). */
	x->iov[0].iov_base = buf;
	x->iov[0].iov_len = buf ? len : 0;
	x->iovcnt = 1;
	x->idx = 0;
	x->off = 0;
	x->pos = 0;
	x->len = x->iov[0].iov_len;
	x->op = op;
}

int rpcrdma_xdr_init_iov(struct rpcrdma_xdr *x, const struct iovec *iov, unsigned int iovcnt,
			 enum rpcrdma_xdr_op op)
{
	size_t total = 0;

	/* Leave a defined (empty) cursor behind even when we refuse. */
	rpcrdma_xdr_init(x, NULL, 0, op);
	if (iovcnt > RPCRDMA_XDR_MAX_IOV || (iovcnt && !iov))
		return -EINVAL;
	for (unsigned int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -EINVAL;
		if (iov[i].iov_len > SIZE_MAX - total)
			return -EINVAL;
		total += iov[i].iov_len;
	}
	if (iovcnt) {
		memcpy(x->iov, iov, iovcnt * sizeof(*iov));
		x->iovcnt = iovcnt;
	}
	x->len = total;
	rpcrdma_xdri_normalize(x);
	return 0;
}

size_t rpcrdma_xdr_getpos(const struct rpcrdma_xdr *x)
{
	return x->pos;
}

size_t rpcrdma_xdr_remaining(const struct rpcrdma_xdr *x)
{
	return x->len - x->pos;
}

int rpcrdma_xdr_setpos(struct rpcrdma_xdr *x, size_t pos)
{
	size_t rem = pos;
	unsigned int i = 0;

	if (pos > x->len)
		return -EINVAL;
	while (i + 1 < x->iovcnt && rem >= x->iov[i].iov_len) {
		rem -= x->iov[i].iov_len;
		i++;
	}
	x->idx = i;
	x->off = rem;
	x->pos = pos;
	return 0;
}

/* ---- slow paths: items that straddle iovecs ---- */

void rpcrdma_xdri_normalize(struct rpcrdma_xdr *x)
{
	while (x->off == x->iov[x->idx].iov_len && x->idx + 1 < x->iovcnt) {
		x->idx++;
		x->off = 0;
	}
}

/* Copy @n bytes (caller checked n <= remaining) into the stream; @src NULL
 * writes zeros. */
static void xdri_write_span(struct rpcrdma_xdr *x, const void *src, size_t n)
{
	const uint8_t *s = src;

	while (n) {
		rpcrdma_xdri_normalize(x);
		struct iovec *v = &x->iov[x->idx];
		size_t chunk = v->iov_len - x->off;
		if (chunk > n)
			chunk = n;
		uint8_t *d = (uint8_t *)v->iov_base + x->off;
		if (s) {
			memcpy(d, s, chunk);
			s += chunk;
		} else {
			memset(d, 0, chunk);
		}
		x->off += chunk;
		x->pos += chunk;
		n -= chunk;
	}
	rpcrdma_xdri_normalize(x);
}

/* Copy @n bytes (caller checked n <= remaining) out of the stream; @dst NULL
 * only skips. */
static void xdri_read_span(struct rpcrdma_xdr *x, void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n) {
		rpcrdma_xdri_normalize(x);
		const struct iovec *v = &x->iov[x->idx];
		size_t chunk = v->iov_len - x->off;
		if (chunk > n)
			chunk = n;
		if (d) {
			memcpy(d, (const uint8_t *)v->iov_base + x->off, chunk);
			d += chunk;
		}
		x->off += chunk;
		x->pos += chunk;
		n -= chunk;
	}
	rpcrdma_xdri_normalize(x);
}

int rpcrdma_xdri_put_slow(struct rpcrdma_xdr *x, const void *src, size_t n)
{
	if (n > x->len - x->pos)
		return -EMSGSIZE;
	xdri_write_span(x, src, n);
	return 0;
}

int rpcrdma_xdri_get_slow(struct rpcrdma_xdr *x, void *dst, size_t n)
{
	if (n > x->len - x->pos)
		return -EBADMSG;
	xdri_read_span(x, dst, n);
	return 0;
}

/* ---- encoders ---- */

int rpcrdma_xdr_put_u32(struct rpcrdma_xdr *x, uint32_t v)
{
	return xdri_put_u32_inline(x, v);
}

int rpcrdma_xdr_put_i32(struct rpcrdma_xdr *x, int32_t v)
{
	return xdri_put_u32_inline(x, (uint32_t)v);
}

/* RFC 4506 §4.5: hyper is 8 bytes, most significant first. */
int rpcrdma_xdr_put_u64(struct rpcrdma_xdr *x, uint64_t v)
{
	uint8_t b[8];

	put_be64(b, v);
	if (XDR_LIKELY(xdri_fits(x, 8))) {
		memcpy(xdri_take(x, 8), b, 8);
		return 0;
	}
	return rpcrdma_xdri_put_slow(x, b, 8);
}

int rpcrdma_xdr_put_i64(struct rpcrdma_xdr *x, int64_t v)
{
	return rpcrdma_xdr_put_u64(x, (uint64_t)v);
}

/* RFC 4506 §4.4: bool is an enum of FALSE = 0, TRUE = 1. */
int rpcrdma_xdr_put_bool(struct rpcrdma_xdr *x, bool v)
{
	return xdri_put_u32_inline(x, v ? 1u : 0u);
}

int rpcrdma_xdr_put_enum(struct rpcrdma_xdr *x, int32_t v)
{
	return xdri_put_u32_inline(x, (uint32_t)v);
}

/* RFC 4506 §4.9: n bytes then 0..3 zero bytes to a multiple of four. */
int rpcrdma_xdr_put_opaque_fixed(struct rpcrdma_xdr *x, const void *p, size_t len)
{
	if (len > SIZE_MAX - 3)
		return -EOVERFLOW;
	if (len && !p)
		return -EINVAL;
	size_t padded = RPCRDMA_XDR_ROUNDUP(len);
	if (padded > x->len - x->pos)
		return -EMSGSIZE;
	if (len)
		xdri_write_span(x, p, len);
	if (padded != len)
		xdri_write_span(x, xdri_zero_pad, padded - len);
	return 0;
}

/* RFC 4506 §4.10: unsigned length, bytes, zero padding. */
int rpcrdma_xdr_put_opaque(struct rpcrdma_xdr *x, const void *p, uint32_t len, uint32_t max)
{
	if (len > max)
		return -E2BIG;
	if (len && !p)
		return -EINVAL;
	size_t padded = RPCRDMA_XDR_ROUNDUP((size_t)len);
	if (padded > x->len - x->pos || RPCRDMA_XDR_UNIT > x->len - x->pos - padded)
		return -EMSGSIZE;
	uint8_t w[4];
	put_be32(w, len);
	xdri_write_span(x, w, 4);
	if (len)
		xdri_write_span(x, p, len);
	if (padded != len)
		xdri_write_span(x, xdri_zero_pad, padded - len);
	return 0;
}

/* RFC 4506 §4.11: a string is encoded exactly like opaque<>. */
int rpcrdma_xdr_put_string(struct rpcrdma_xdr *x, const char *s, uint32_t max)
{
	if (!s)
		return -EINVAL;
	size_t n = strnlen(s, (size_t)max + 1);
	if (n > max)
		return -E2BIG;
	return rpcrdma_xdr_put_opaque(x, s, (uint32_t)n, max);
}

int rpcrdma_xdr_put_count(struct rpcrdma_xdr *x, uint32_t count, uint32_t max)
{
	if (count > max)
		return -E2BIG;
	return xdri_put_u32_inline(x, count);
}

int rpcrdma_xdr_reserve(struct rpcrdma_xdr *x, size_t len, void **out)
{
	if (!out || len % RPCRDMA_XDR_UNIT)
		return -EINVAL;
	if (len > x->len - x->pos)
		return -EMSGSIZE;
	if (len == 0) {
		*out = xdri_empty_rw;
		return 0;
	}
	rpcrdma_xdri_normalize(x);
	if (!xdri_fits(x, len))
		return -EMSGSIZE; /* not contiguous */
	*out = xdri_take(x, len);
	return 0;
}

/* ---- decoders ---- */

int rpcrdma_xdr_get_u32(struct rpcrdma_xdr *x, uint32_t *v)
{
	return xdri_get_u32_inline(x, v);
}

int rpcrdma_xdr_get_i32(struct rpcrdma_xdr *x, int32_t *v)
{
	uint32_t u;
	int rc = xdri_get_u32_inline(x, &u);
	if (rc == 0)
		*v = (int32_t)u;
	return rc;
}

int rpcrdma_xdr_get_u64(struct rpcrdma_xdr *x, uint64_t *v)
{
	uint8_t b[8];
	if (XDR_LIKELY(xdri_fits(x, 8))) {
		*v = get_be64(xdri_take(x, 8));
		return 0;
	}
	int rc = rpcrdma_xdri_get_slow(x, b, 8);
	if (rc)
		return rc;
	*v = get_be64(b);
	return 0;
}

int rpcrdma_xdr_get_i64(struct rpcrdma_xdr *x, int64_t *v)
{
	uint64_t u;
	int rc = rpcrdma_xdr_get_u64(x, &u);
	if (rc == 0)
		*v = (int64_t)u;
	return rc;
}

/* RFC 4506 §4.4: only 0 and 1 are booleans. */
int rpcrdma_xdr_get_bool(struct rpcrdma_xdr *x, bool *v)
{
	struct xdri_mark m = xdri_mark(x);
	uint32_t u;
	int rc = xdri_get_u32_inline(x, &u);
	if (rc)
		return rc;
	if (u > 1) {
		xdri_restore(x, m);
		return -EINVAL;
	}
	*v = u == 1;
	return 0;
}

int rpcrdma_xdr_get_enum(struct rpcrdma_xdr *x, int32_t *v)
{
	return rpcrdma_xdr_get_i32(x, v);
}

int rpcrdma_xdr_get_opaque_fixed(struct rpcrdma_xdr *x, void *p, size_t len)
{
	if (len > SIZE_MAX - 3)
		return -EOVERFLOW;
	if (len && !p)
		return -EINVAL;
	size_t padded = RPCRDMA_XDR_ROUNDUP(len);
	if (padded > x->len - x->pos)
		return -EBADMSG;
	if (len)
		xdri_read_span(x, p, len);
	if (padded != len)
		xdri_read_span(x, NULL, padded - len);
	return 0;
}

/* Reads the length word of an opaque<max> and checks that length and
 * padding are present. On failure the cursor is back where it started. */
static int xdri_get_opaque_len(struct rpcrdma_xdr *x, uint32_t max, uint32_t *len,
			       struct xdri_mark *m)
{
	*m = xdri_mark(x);
	uint32_t n;
	int rc = xdri_get_u32_inline(x, &n);
	if (rc)
		return rc;
	if (n > max) {
		xdri_restore(x, *m);
		return -E2BIG;
	}
	if (RPCRDMA_XDR_ROUNDUP((size_t)n) > x->len - x->pos) {
		xdri_restore(x, *m);
		return -EBADMSG;
	}
	*len = n;
	return 0;
}

int rpcrdma_xdr_get_opaque(struct rpcrdma_xdr *x, void *p, uint32_t max, uint32_t *len)
{
	struct xdri_mark m;
	uint32_t n;

	if (!len || (max && !p))
		return -EINVAL;
	int rc = xdri_get_opaque_len(x, max, &n, &m);
	if (rc)
		return rc;
	size_t padded = RPCRDMA_XDR_ROUNDUP((size_t)n);
	if (n)
		xdri_read_span(x, p, n);
	if (padded != n)
		xdri_read_span(x, NULL, padded - n);
	*len = n;
	return 0;
}

int rpcrdma_xdr_get_opaque_ref(struct rpcrdma_xdr *x, uint32_t max, const void **p, uint32_t *len)
{
	struct xdri_mark m;
	uint32_t n;

	if (!p || !len)
		return -EINVAL;
	int rc = xdri_get_opaque_len(x, max, &n, &m);
	if (rc)
		return rc;
	if (n == 0) {
		*p = xdri_empty;
		*len = 0;
		return 0;
	}
	rpcrdma_xdri_normalize(x);
	if (!xdri_fits(x, n)) {
		xdri_restore(x, m);
		return -EAGAIN;
	}
	const void *q = xdri_take(x, n);
	size_t padded = RPCRDMA_XDR_ROUNDUP((size_t)n);
	if (padded != n)
		xdri_read_span(x, NULL, padded - n);
	*p = q;
	*len = n;
	return 0;
}

int rpcrdma_xdr_get_string(struct rpcrdma_xdr *x, char *buf, size_t bufsize)
{
	struct xdri_mark m;
	uint32_t n;

	if (!buf || bufsize == 0)
		return -EINVAL;
	size_t maxs = bufsize - 1;
	uint32_t max = maxs > UINT32_MAX ? UINT32_MAX : (uint32_t)maxs;
	int rc = xdri_get_opaque_len(x, max, &n, &m);
	if (rc)
		return rc;
	size_t padded = RPCRDMA_XDR_ROUNDUP((size_t)n);
	if (n)
		xdri_read_span(x, buf, n);
	/* A string that carries a NUL would be silently cut by every C
	 * consumer; refuse it rather than hand out a different value. */
	if (n && memchr(buf, '\0', n)) {
		xdri_restore(x, m);
		buf[0] = '\0';
		return -EINVAL;
	}
	if (padded != n)
		xdri_read_span(x, NULL, padded - n);
	buf[n] = '\0';
	return 0;
}

int rpcrdma_xdr_get_count(struct rpcrdma_xdr *x, uint32_t max, size_t min_elem_size,
			  uint32_t *count)
{
	struct xdri_mark m = xdri_mark(x);
	uint32_t n;

	if (!count)
		return -EINVAL;
	int rc = xdri_get_u32_inline(x, &n);
	if (rc)
		return rc;
	if (n > max) {
		xdri_restore(x, m);
		return -E2BIG;
	}
	/* Division, not multiplication: count x size cannot overflow here. */
	if (min_elem_size && n > (x->len - x->pos) / min_elem_size) {
		xdri_restore(x, m);
		return -EOVERFLOW;
	}
	*count = n;
	return 0;
}

int rpcrdma_xdr_skip(struct rpcrdma_xdr *x, size_t len)
{
	if (len > SIZE_MAX - 3)
		return -EOVERFLOW;
	size_t padded = RPCRDMA_XDR_ROUNDUP(len);
	if (padded > x->len - x->pos)
		return x->op == RPCRDMA_XDR_ENCODE ? -EMSGSIZE : -EBADMSG;
	xdri_read_span(x, NULL, padded);
	return 0;
}

int rpcrdma_xdr_get_inline(struct rpcrdma_xdr *x, size_t len, const void **out)
{
	if (!out)
		return -EINVAL;
	if (len > x->len - x->pos)
		return -EBADMSG;
	if (len == 0) {
		*out = xdri_empty;
		return 0;
	}
	rpcrdma_xdri_normalize(x);
	if (!xdri_fits(x, len))
		return -EAGAIN;
	*out = xdri_take(x, len);
	return 0;
}
