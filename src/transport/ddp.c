// SPDX-License-Identifier: MIT
/*
 * DDP-eligible data items (RFC 8166 §3.4.1, §3.4.5, §3.4.6). The upper
 * layer marks an opaque<> as DDP-eligible by giving it the type struct
 * rpcrdma_bulk; its routine, rpcrdma_xdr_bulk(), asks the XDR stream's
 * transport context (struct xprt_ddp, hung on the stream's x_public) what
 * to do with the bytes:
 *   requester, call: the length word stays inline, the data leaves the
 *     stream and becomes a Read chunk at the data's XDR position; the XDR
 *     roundup is neither in the chunk nor inline (RFC 8166 §3.4.5 "Read
 *     chunk roundup", as Linux's client sends it). The position is the
 *     one in the complete stream, as if every earlier chunk's data and
 *     roundup were still inline (RFC 8166 §3.4.5), not the offset in the
 *     reduced stream sent inline;
 *   requester, reply: item i may have been written into Write chunk i
 *     (RFC 8166 §3.4.6), with no roundup inline after it;
 *   responder, call: the stream was spliced back together (splice.c), so
 *     the data is read in place without a copy;
 *   responder, reply: item i goes into Write chunk i when the requester
 *     offered one large enough (reply.c posts the RDMA Writes).
 * Over any other XDR stream the routine is xdr_bytes() with no size limit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/tirpc.h"
#include "transport/xprt.h"

#define XPRT_DDP_MAGIC 0x44445021u
/* struct rpcrdma_bulk.flags: the decode allocated base */
#define BULK_F_ALLOC 0x1u

void xprt_ddp_init(struct xprt_ddp *d, enum xprt_ddp_role role)
{
	/* Per call on the hot path: only the counters and what is read
	 * whole (got[]) are cleared; the arrays are read below their counts. */
	d->magic = XPRT_DDP_MAGIC;
	d->role = role;
	d->idx = 0;
	d->threshold = 0;
	d->no_ddp = false;
	d->nitems = 0;
	d->elided = 0;
	d->recv_bulk = NULL;
	d->nrecv_bulk = 0;
	d->nplaced = 0;
	d->nwrite = 0;
	memset(d->got, 0, sizeof(d->got));
}

void xprt_ddp_attach(XDR *xdrs, struct xprt_ddp *d)
{
	xdrs->x_public = (char *)d;
}

static struct xprt_ddp *ddp_of(XDR *xdrs)
{
	struct xprt_ddp *d;

	/* Only our cursor streams carry a context; x_public of anyone else's
	 * stream is theirs. */
	if (!rpcrdma_tirpc_xdr_cursor(xdrs) || !xdrs->x_public)
		return NULL;
	d = (struct xprt_ddp *)(void *)xdrs->x_public;
	return d->magic == XPRT_DDP_MAGIC ? d : NULL;
}

static bool_t bulk_encode(XDR *xdrs, struct xprt_ddp *d, struct rpcrdma_bulk *b)
{
	u_int len = b->len;
	uint32_t i = d ? d->idx++ : 0;

	if (len && !b->base)
		return FALSE;
	if (d && d->role == XPRT_DDP_CAPTURE && i < RPCRDMA_MAX_WRITE_CHUNKS) {
		/* The duplicate request cache (drc.c) keeps the first items
		 * apart, to encode them again as a reply would. */
		struct xprt_ddp_item *it = &d->items[d->nitems++];

		it->pos = XDR_GETPOS(xdrs);
		it->len = len;
		it->base = b->base;
		return TRUE;
	}
	if (!xdr_u_int(xdrs, &len))
		return FALSE;
	if (d && d->role == XPRT_DDP_CLNT_ENC && !d->no_ddp && len >= d->threshold && len &&
	    d->nitems < RPCRDMA_MAX_BULK) {
		struct xprt_ddp_item *it = &d->items[d->nitems++];

		/* RFC 8166 §3.4.5: rdma_position counts the data and XDR
		 * roundup of the chunks before this one. */
		it->pos = XDR_GETPOS(xdrs) + d->elided;
		it->len = len;
		it->base = b->base;
		d->elided += (uint32_t)RPCRDMA_XDR_ROUNDUP((size_t)len);
		return TRUE;
	}
	if (d && d->role == XPRT_DDP_SVC_ENC && i < d->nwrite && len && len <= d->write_cap[i]) {
		struct xprt_ddp_item *it = &d->items[d->nitems++];

		it->pos = i; /* Write chunk index */
		it->len = len;
		it->base = b->base;
		return TRUE;
	}
	return len == 0 || xdr_opaque(xdrs, b->base, len);
}

/* A stream that is not ours (libtirpc's over TCP, a memory stream): how
 * many bytes it holds is unknown, so the buffer grows as they arrive,
 * from 64 KiB, never ahead of them: a hostile length costs no more memory
 * than the bytes sent (fuzz_nfs3_args: 66 bytes asked malloc for 3.9 GB). */
static bool_t bulk_decode_grow(XDR *xdrs, struct rpcrdma_bulk *b, u_int len)
{
	size_t cap = len < 65536 ? len : 65536, got = 0;
	char *buf = malloc(cap ? cap : 1), pad[4];

	while (buf && got < len) {
		size_t n = (cap - got) < (len - got) ? cap - got : len - got;
		if (n == 0) {
			cap = cap * 2 < len ? cap * 2 : len;
			char *nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
			continue;
		}
		if (!XDR_GETBYTES(xdrs, buf + got, (u_int)n))
			break;
		got += n;
	}
	if (!buf || got < len ||
	    !XDR_GETBYTES(xdrs, pad, (u_int)(RPCRDMA_XDR_ROUNDUP(len) - len))) {
		free(buf);
		return FALSE;
	}
	b->base = buf;
	b->len = len;
	b->flags |= BULK_F_ALLOC;
	return TRUE;
}

static bool_t bulk_decode(XDR *xdrs, struct xprt_ddp *d, struct rpcrdma_bulk *b)
{
	u_int len;
	uint32_t i = d ? d->idx++ : 0;
	void *dst;

	if (!xdr_u_int(xdrs, &len))
		return FALSE;
	if (d && d->role == XPRT_DDP_CLNT_DEC && i < d->nrecv_bulk) {
		if (i < d->nplaced && d->placed[i]) {
			/* Placed by RDMA Write; the responder reported exactly
			 * how many bytes (RFC 8166 §3.4.6). */
			if (d->placed[i] != len)
				return FALSE;
			b->base = d->recv_bulk[i].base;
			b->len = len;
			b->flags = 0;
			d->got[i] = len;
			return TRUE;
		}
		if (len > d->recv_bulk[i].len)
			return FALSE;
		if (!xdr_opaque(xdrs, d->recv_bulk[i].base, len))
			return FALSE;
		b->base = d->recv_bulk[i].base;
		b->len = len;
		b->flags = 0;
		d->got[i] = len;
		return TRUE;
	}
	if (d && d->role == XPRT_DDP_SVC_DEC) {
		struct rpcrdma_xdr *x = rpcrdma_tirpc_xdr_cursor(xdrs);
		size_t start = rpcrdma_xdr_getpos(x);
		size_t pad = RPCRDMA_XDR_ROUNDUP(len) - len;
		const void *p;

		/* Zero copy when the bytes are contiguous (a pulled Read
		 * chunk always is); the request owns them until its reply. */
		if (rpcrdma_xdr_get_inline(x, len, &p) == 0) {
			if (rpcrdma_xdr_remaining(x) < pad) {
				rpcrdma_xdr_setpos(x, start);
				return FALSE;
			}
			rpcrdma_xdr_setpos(x, start + len + pad);
			b->base = (void *)(uintptr_t)p;
			b->len = len;
			b->flags = 0;
			return TRUE;
		}
	}
	void *owned = NULL; /* a buffer allocated here, until it is handed to b */

	if (b->base && !(b->flags & BULK_F_ALLOC)) {
		if (len > b->len)
			return FALSE;
		dst = b->base;
	} else {
		/* Validate before allocating: the bytes must be there. */
		struct rpcrdma_xdr *x = rpcrdma_tirpc_xdr_cursor(xdrs);

		if (x && rpcrdma_xdr_remaining(x) < len)
			return FALSE;
		if (b->flags & BULK_F_ALLOC) {
			/* Drop the old buffer now so a failure below leaves no
			 * dangling pointer for XDR_FREE to free twice. */
			free(b->base);
			b->base = NULL;
			b->flags &= ~BULK_F_ALLOC;
		}
		if (!x)
			return bulk_decode_grow(xdrs, b, len);
		owned = malloc(len ? len : 1);
		if (!owned)
			return FALSE;
		dst = owned;
	}
	if (!xdr_opaque(xdrs, dst, len)) {
		free(owned);
		return FALSE;
	}
	if (owned)
		b->flags |= BULK_F_ALLOC;
	b->base = dst;
	b->len = len;
	return TRUE;
}

bool_t rpcrdma_xdr_bulk(XDR *xdrs, struct rpcrdma_bulk *b)
{
	struct xprt_ddp *d = ddp_of(xdrs);

	switch (xdrs->x_op) {
	case XDR_ENCODE:
		return bulk_encode(xdrs, d, b);
	case XDR_DECODE:
		return bulk_decode(xdrs, d, b);
	case XDR_FREE:
		if (b->flags & BULK_F_ALLOC) {
			free(b->base);
			b->base = NULL;
			b->len = 0;
			b->flags &= ~BULK_F_ALLOC;
		}
		return TRUE;
	}
	return FALSE;
}
