// SPDX-License-Identifier: MIT
/*
 * Requester marshalling (RFC 8166 §3.5): encode the RPC call, then decide
 * how it travels.
 *   Short     RDMA_MSG, transport header + whole RPC message inline.
 *   Chunked   RDMA_MSG, DDP-eligible argument items of at least the DDP
 *             threshold moved by Read chunks at their XDR positions
 *             (§3.4.5); Write chunks offered for large result buffers
 *             (§3.4.6); a Reply chunk offered when the reply may exceed the
 *             inline receive threshold (§3.4.7).
 *   Long Call RDMA_NOMSG + Position-Zero Read chunk holding the RPC
 *             message (§3.5.3.1) when header + message still exceed the
 *             inline send threshold; other Read chunks stay at their
 *             positions.
 * Memory exposed to the responder is registered per call on MRs the slot
 * keeps (re-registration, no allocation) and fenced by xprt_call_fence()
 * before the call completes.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/tirpc.h"
#include "transport/xprt.h"

/* Largest Long Call message we build (bulk items excluded). */
#define XPRT_MAX_LONG_CALL (64u << 20)

static int expose(struct xprt_call *c, unsigned int i, const void *base, size_t len,
		  unsigned int access, struct rpcrdma1_segment *seg)
{
	int rc = xprt_mr_use(c->pd, &c->mr[i], base, len, access);

	if (rc)
		return rc;
	c->mr_used |= 1u << i;
	c->reg_bytes += len;
	seg->handle = rpcrdma_mr_stag(c->mr[i]);
	seg->length = (uint32_t)len;
	seg->offset = rpcrdma_mr_offset(c->mr[i]);
	return 0;
}

/* Build the three chunk lists from what is registered. */
static int build_lists(struct xprt_call *c, const struct xprt_ddp *d, bool long_call,
		       const struct rpcrdma1_segment *p0)
{
	struct rpcrdma1_chunks *ch = &c->chunks;
	struct rpcrdma1_segment seg;
	uint32_t seg_max =
	    (c->opts.comp_mask & RPCRDMA_CALL_OPT_WRITE_SEG) ? c->opts.write_seg_max : UINT32_MAX;
	int rc;

	rpcrdma1_chunks_init(ch);
	c->nread = 0;
	c->read_bytes = 0;
	if (long_call) {
		/* RFC 8166 §3.5.3.1: position zero comes first. */
		rc = rpcrdma1_chunks_add_read(ch, 0, p0);
		if (rc)
			return rc;
		c->nread++;
		c->read_bytes += p0->length;
	}
	for (uint32_t i = 0; i < d->nitems; i++) {
		seg.handle = rpcrdma_mr_stag(c->mr[XPRT_MR_READ0 + i]);
		seg.length = d->items[i].len;
		seg.offset = rpcrdma_mr_offset(c->mr[XPRT_MR_READ0 + i]);
		/* RFC 8166 §3.4.5: the chunk carries the item's data without
		 * its XDR roundup; the position is the data's offset in the
		 * complete stream (ddp.c counts earlier chunks back in). */
		rc = rpcrdma1_chunks_add_read(ch, d->items[i].pos, &seg);
		if (rc)
			return rc;
		c->nread++;
		c->read_bytes += seg.length;
	}
	/* Write chunk i: result buffer i as segments of at most seg_max
	 * bytes over its one MR, in order (RFC 8166 §3.4.6: the responder
	 * fills them in order). */
	for (uint32_t i = 0; i < c->nwrite; i++) {
		uint64_t left = c->write_cap[i];

		seg.handle = rpcrdma_mr_stag(c->mr[XPRT_MR_WRITE0 + i]);
		seg.offset = rpcrdma_mr_offset(c->mr[XPRT_MR_WRITE0 + i]);
		rc = rpcrdma1_chunks_add_write_chunk(ch);
		do {
			seg.length = left > seg_max ? seg_max : (uint32_t)left;
			if (!rc)
				rc = rpcrdma1_chunks_add_write_seg(ch, &seg);
			seg.offset += seg.length;
			left -= seg.length;
		} while (!rc && left);
		if (rc)
			return rc;
	}
	if (c->reply_offered) {
		seg.handle = rpcrdma_mr_stag(c->mr[XPRT_MR_REPLY]);
		seg.length = (uint32_t)c->reply_cap;
		seg.offset = rpcrdma_mr_offset(c->mr[XPRT_MR_REPLY]);
		rc = rpcrdma1_chunks_add_reply_seg(ch, &seg);
		if (rc)
			return rc;
	}
	return 0;
}

/* Encode RPC header + args into @buf; 0, or -EMSGSIZE when they might fit
 * a larger buffer. */
static int encode_msg(struct xprt_call *c, struct xprt_ddp *d, uint8_t *buf, size_t cap,
		      uint32_t ddp_threshold, size_t *len)
{
	struct rpcrdma_xdr x;
	XDR xdrs;

	xprt_ddp_init(d, XPRT_DDP_CLNT_ENC);
	d->threshold = ddp_threshold ? ddp_threshold : 1;
	d->no_ddp =
	    (c->opts.comp_mask & RPCRDMA_CALL_OPT_FLAGS) && (c->opts.flags & RPCRDMA_CALL_F_NO_DDP);
	/* RPC call header with AUTH_NONE (short.c), or with the call's own
	 * credential and verifier after proc (RFC 5531 §9; auth_len >= 16),
	 * then the arguments. */
	size_t hlen = c->auth ? XPRT_SHORT_CALL - 16u + c->auth_len : XPRT_SHORT_CALL;

	if (cap < hlen)
		return -EMSGSIZE;
	xprt_short_call_hdr(buf, c->xid, c->prog, c->vers, c->proc);
	if (c->auth)
		memcpy(buf + XPRT_SHORT_CALL - 16u, c->auth, c->auth_len);
	if (!c->xargs) {
		*len = hlen;
		return 0;
	}
	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	if (rpcrdma_xdr_setpos(&x, hlen))
		return -EMSGSIZE;
	rpcrdma_tirpc_xdr_create(&xdrs, &x);
	xprt_ddp_attach(&xdrs, d);
	if (c->xargs && !(*c->xargs)(&xdrs, c->args))
		return -EMSGSIZE;
	*len = rpcrdma_xdr_getpos(&x);
	return 0;
}

/* Step 5's Short message: RDMA_MSG without chunks (short.c) in front of
 * the c->msg_len bytes of c->msg. */
static void short_msg(struct xprt_call *c, uint32_t credits, uint32_t vers)
{
	if (vers == RPCRDMA1_VERSION) {
		xprt_short_rdma_msg(c->hdr, c->xid, credits);
		c->hdr_len = XPRT_SHORT_HDR;
	} else {
		c->hdr_len = xprt_v2_short_msg(c->hdr, c->xid, credits, RPCRDMA2_CALL);
	}
	c->nstags = 0;
	c->nread = 0;
	c->read_bytes = 0;
	c->call_proc = RPCRDMA1_MSG;
	c->sge[0].addr = (uint64_t)(uintptr_t)c->hdr;
	c->sge[0].length = c->hdr_len;
	c->sge[0].lkey = c->lkey;
	c->sge[1].addr = (uint64_t)(uintptr_t)c->msg;
	c->sge[1].length = c->msg_len;
	c->sge[1].lkey = c->lkey;
	c->nsge = 2;
}

/* Bytes of the transport header of a reply sent inline to @c (RFC 8166
 * §4.2): fixed words, an empty Read list, the Write list echoed with
 * every segment offered (§3.4.6; the upper bound, the responder may
 * leave some unused), no Reply chunk. Linux's client subtracts this from
 * the threshold too (re_max_inline_recv). */
static uint64_t reply_hdr_size(const struct xprt_call *c, uint32_t vers)
{
	uint32_t seg_max =
	    (c->opts.comp_mask & RPCRDMA_CALL_OPT_WRITE_SEG) ? c->opts.write_seg_max : 0;
	uint64_t n = xprt_hdr_fixed(vers) + 12u;

	for (uint32_t i = 0; i < c->nwrite; i++) {
		uint64_t nsegs = seg_max ? (c->write_cap[i] + seg_max - 1) / seg_max : 1;

		n += 8u + 16u * nsegs; /* discriminator, count, segments */
	}
	return n;
}

/* Steps 3 and 4 of marshal_full(): Write chunks for the result bulk
 * buffers and a Reply chunk, exposed for the responder to write. */
static int expose_results(struct xprt_call *c, const struct xprt_limits *lim,
			  const struct xprt_ddp *d, uint32_t ddp_threshold)
{
	int rc;

	/* 3. Write chunks for result bulk buffers, in order: Write chunk i is
	 * consumed by result bulk item i (RFC 8166 §3.4.6), so only a prefix
	 * of large-enough buffers can be offered. */
	if ((c->opts.comp_mask & RPCRDMA_CALL_OPT_WRITE_SEG) &&
	    (c->opts.write_seg_max < 4 || (c->opts.write_seg_max & 3)))
		return -EINVAL;
	uint32_t nrb;
	const struct rpcrdma_buf *rb = xprt_recv_bulk(&c->opts, &nrb);

	if (rb && !d->no_ddp) {
		for (uint32_t i = 0; i < nrb; i++) {
			const struct rpcrdma_buf *b = &rb[i];
			struct rpcrdma1_segment seg;

			if (!b->base || b->len < ddp_threshold || !b->len)
				break;
			rc = expose(c, XPRT_MR_WRITE0 + i, b->base, b->len,
				    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &seg);
			if (rc)
				return rc;
			c->write_cap[i] = b->len;
			c->nwrite++;
		}
	}
	/* 4. A Reply chunk when the reply may not fit inline (§3.5.3.2):
	 * the responder sends its transport header in the same message, so
	 * header + reply must fit the threshold (issue 32). */
	if ((c->opts.comp_mask & RPCRDMA_CALL_OPT_REPLY_SIZE) &&
	    !(c->opts.comp_mask & RPCRDMA_CALL_OPT_UNKNOWN_REPLY) &&
	    reply_hdr_size(c, lim->vers) + c->opts.reply_size > lim->inline_recv) {
		struct rpcrdma1_segment seg;
		size_t rlen = RPCRDMA_XDR_ROUNDUP((size_t)c->opts.reply_size);

		rc = xprt_lbuf_reserve(&c->lreply, rlen);
		if (!rc)
			rc = expose(c, XPRT_MR_REPLY, c->lreply.buf, rlen,
				    RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE, &seg);
		if (rc)
			return rc;
		c->reply_offered = true;
		c->reply_cap = rlen;
	}

	return 0;
}

/* Step 6 of marshal_full(): the transport header and the gather list
 * of the Send. */
static int encode_header(struct xprt_call *c, const struct xprt_limits *lim, bool long_call,
			 size_t mlen, uint32_t credits)
{
	struct rpcrdma_xdr hx;
	int rc;

	/* 6. The transport header (RFC 8166 §4.2): rdma_credit is our
	 * request, the slots we have receive buffers for. */
	rpcrdma_xdr_init(&hx, c->hdr, lim->inline_send, RPCRDMA_XDR_ENCODE);
	rc = xprt_hdr_encode(&hx, lim->vers, long_call, c->xid, credits, RPCRDMA2_CALL, &c->chunks);
	if (rc)
		return rc;
	c->hdr_len = (uint32_t)rpcrdma_xdr_getpos(&hx);
	c->call_proc = long_call ? RPCRDMA1_NOMSG : RPCRDMA1_MSG;
	c->sge[0].addr = (uint64_t)(uintptr_t)c->hdr;
	c->sge[0].length = c->hdr_len;
	c->sge[0].lkey = c->lkey;
	c->nsge = 1;
	if (!long_call && mlen) {
		c->sge[1].addr = (uint64_t)(uintptr_t)c->msg;
		c->sge[1].length = (uint32_t)mlen;
		c->sge[1].lkey = c->lkey;
		c->nsge = 2;
	}
	return 0;
}

/* Every call but one without arguments and options (xprt_marshal): out of
 * line, so that one needs none of this function's stack frame. */
__attribute__((noinline)) static int marshal_full(struct xprt_call *c,
						  const struct xprt_limits *lim,
						  uint32_t ddp_threshold, uint32_t credits)
{
	struct xprt_ddp d;
	struct rpcrdma1_segment p0 = {0};
	uint8_t *mbuf = c->msg;
	size_t cap = lim->inline_send, mlen = 0, hsize;
	bool in_pool = true, long_call;
	int rc;

	/* 1. The RPC message, inline buffer first; a larger one only if it
	 * does not fit (then it can only go as a Long Call). */
	for (;;) {
		rc = encode_msg(c, &d, mbuf, cap, ddp_threshold, &mlen);
		if (!rc)
			break;
		if (cap >= XPRT_MAX_LONG_CALL)
			return -EINVAL; /* the args do not encode at any size */
		cap = in_pool ? 4 * (size_t)lim->inline_send : cap * 2;
		in_pool = false;
		rc = xprt_lbuf_reserve(&c->lcall, cap);
		if (rc)
			return rc;
		mbuf = c->lcall.buf;
	}
	c->msg_len = (uint32_t)mlen;
	long_call = !in_pool || ((c->opts.comp_mask & RPCRDMA_CALL_OPT_FLAGS) &&
				 (c->opts.flags & RPCRDMA_CALL_F_LONG));

	/* RFC 5666 §6.2: a server whose CONF_RDMA said maxrdmaread 0 must
	 * not be asked to RDMA Read (ccp_clnt.c). */
	if (lim->no_reads && (long_call || d.nitems))
		return -EMSGSIZE;
	/* 2. Expose the DDP-eligible argument items (Read chunks). */
	for (uint32_t i = 0; i < d.nitems; i++) {
		struct rpcrdma1_segment seg;

		rc = expose(c, XPRT_MR_READ0 + i, d.items[i].base, d.items[i].len,
			    RPCRDMA_ACCESS_REMOTE_READ, &seg);
		if (rc)
			return rc;
	}
	rc = expose_results(c, lim, &d, ddp_threshold);
	if (rc)
		return rc;

	/* 5. Short/Chunked if header + message fit the threshold; a Short
	 * message without any chunk takes the word-by-word path (short.c). */
	if (!long_call && !d.nitems && !c->nwrite && !c->reply_offered &&
	    xprt_hdr_fixed(lim->vers) + 12u + mlen <= lim->inline_send) {
		short_msg(c, credits, lim->vers);
		return 0;
	}
	if (!long_call) {
		rc = build_lists(c, &d, false, NULL);
		if (rc)
			return rc == -E2BIG ? -EMSGSIZE : rc;
		hsize = xprt_hdr_fixed(lim->vers) + rpcrdma1_chunks_size(&c->chunks);
		if (hsize + mlen > lim->inline_send) {
			if (lim->no_reads)
				return -EMSGSIZE; /* a Long Call: the server would Read it */
			long_call = true;
		}
	}
	if (long_call) {
		if (in_pool) {
			rc = xprt_lbuf_reserve(&c->lcall, mlen);
			if (rc)
				return rc;
			memcpy(c->lcall.buf, c->msg, mlen);
		}
		rc = expose(c, XPRT_MR_LONG, c->lcall.buf, mlen, RPCRDMA_ACCESS_REMOTE_READ, &p0);
		if (rc)
			return rc;
		rc = build_lists(c, &d, true, &p0);
		if (rc)
			return rc == -E2BIG ? -EMSGSIZE : rc;
	}
	c->nstags = (uint32_t)__builtin_popcount(c->mr_used);

	return encode_header(c, lim, long_call, mlen, credits);
}

uint32_t xprt_call_only_stag(const struct xprt_call *c)
{
	if (c->nstags != 1)
		return 0;
	for (unsigned int i = 0; i < XPRT_CALL_NMR; i++)
		if (c->mr_used & (1u << i))
			return rpcrdma_mr_stag(c->mr[i]);
	return 0;
}

uint32_t xprt_call_fence(struct xprt_call *c, bool remote_inv, uint32_t remote_stag)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < XPRT_CALL_NMR; i++) {
		if (!(c->mr_used & (1u << i)))
			continue;
		/* RFC 8797 §4 (remote invalidation): a Send With Invalidate already
		 * fenced this one; invalidating it again is not needed. */
		if (remote_inv && rpcrdma_mr_stag(c->mr[i]) == remote_stag &&
		    !rpcrdma_mr_valid(c->mr[i]))
			continue;
		rpcrdma_mr_invalidate(c->mr[i]);
		n++;
	}
	c->mr_used = 0;
	return n;
}

void xprt_call_fini(struct xprt_call *c)
{
	for (unsigned int i = 0; i < XPRT_CALL_NMR; i++)
		if (c->mr[i])
			rpcrdma_mr_dereg(c->mr[i]);
	memset(c->mr, 0, sizeof(c->mr));
	xprt_lbuf_fini(&c->lcall);
	xprt_lbuf_fini(&c->lreply);
}

int xprt_marshal(struct xprt_call *c, const struct xprt_limits *lim, uint32_t ddp_threshold,
		 uint32_t credits)
{
	c->mr_used = 0;
	c->reg_bytes = 0;
	c->nwrite = 0;
	c->reply_offered = false;
	/* A call without arguments and without call options (a NULL
	 * procedure, say): what steps 1-5 of marshal_full() decide for it,
	 * directly. */
	if (!c->xargs && !c->opts.comp_mask && !c->auth &&
	    lim->inline_send >= XPRT_SHORT_HDR + XPRT_SHORT_CALL) {
		xprt_short_call_hdr(c->msg, c->xid, c->prog, c->vers, c->proc);
		c->msg_len = XPRT_SHORT_CALL;
		short_msg(c, credits, lim->vers);
		return 0;
	}
	return marshal_full(c, lim, ddp_threshold, credits);
}
