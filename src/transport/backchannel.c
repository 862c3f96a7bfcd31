// SPDX-License-Identifier: MIT
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), transport half: direction of a
 * received message, reverse requester slots, reverse responder chunk
 * handling. See backchannel.h; threads and locks are the API's
 * (src/api/backchannel.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/tirpc.h"
#include "transport/backchannel.h"
#include "util/clock.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static enum xprt_dir rpc_dir(const uint8_t *msg, size_t len, uint32_t xid)
{
	uint32_t mt;

	if (len < 8)
		return XPRT_DIR_NONE;
	/* RFC 8167 §5.1, §5.2: the RPC message starts with the transport
	 * header's XID; otherwise nothing in it can be trusted. */
	if (be32(msg) != xid)
		return XPRT_DIR_NONE;
	mt = be32(msg + 4);
	if (mt == 0)
		return XPRT_DIR_CALL;
	if (mt == 1)
		return XPRT_DIR_REPLY;
	return XPRT_DIR_NONE;
}

enum xprt_dir xprt_msg_direction(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h,
				 bool *decoded)
{
	uint32_t xid;

	*decoded = false;
	if (len < RPCRDMA1_FIXED_SIZE)
		return XPRT_DIR_NONE;
	xid = be32(buf);
	if (be32(buf + 4) != RPCRDMA1_VERSION)
		return XPRT_DIR_NONE;
	/* Fast path: RDMA_MSG with three empty chunk lists, the RPC message
	 * right after the 28-byte header. */
	if (be32(buf + 12) == RPCRDMA1_MSG && len >= RPCRDMA1_MIN_MSG_SIZE && be32(buf + 16) == 0 &&
	    be32(buf + 20) == 0 && be32(buf + 24) == 0)
		return rpc_dir(buf + RPCRDMA1_MIN_MSG_SIZE, len - RPCRDMA1_MIN_MSG_SIZE, xid);
	if (rpcrdma1_decode_buf(buf, len, h))
		return XPRT_DIR_NONE;
	*decoded = true;
	switch (h->proc) {
	case RPCRDMA1_MSG:
	case RPCRDMA1_MSGP:
		if (h->hdr_len > len)
			return XPRT_DIR_NONE;
		return rpc_dir(buf + h->hdr_len, len - h->hdr_len, xid);
	case RPCRDMA1_NOMSG:
		/* RFC 8166 §3.5.3.1: a Long Call's message is the
		 * Position-Zero Read chunk; §3.5.3.2: a Long Reply's is in the
		 * Reply chunk, and Version One replies carry no Read list. */
		if (h->chunks.nreads && h->chunks.reads[0].position == 0)
			return XPRT_DIR_CALL;
		if (h->chunks.reply_present && !h->chunks.nreads)
			return XPRT_DIR_REPLY;
		return XPRT_DIR_NONE;
	default:
		/* RDMA_ERROR and RDMA_DONE carry no RPC message. */
		return XPRT_DIR_NONE;
	}
}

bool xprt_bc_has_chunks(const struct rpcrdma1_chunks *c)
{
	return c->nreads || c->nwrites || c->reply_present;
}

/* ------------------------------------------------------------------ */
/* Reverse requester slots                                             */
/* ------------------------------------------------------------------ */

int xprt_rslots_init(struct xprt_rslots *r, struct rpcrdma_pd *pd, uint32_t n, uint32_t inline_send)
{
	int rc;

	memset(r, 0, sizeof(*r));
	if (!n || n > RPCRDMA_BC_MAX_CREDITS)
		return -EINVAL;
	r->slot = calloc(n, sizeof(*r->slot));
	if (!r->slot)
		return -ENOMEM;
	rc = xprt_pool_init(&r->sendp, pd, 2 * n, inline_send);
	if (rc) {
		free(r->slot);
		r->slot = NULL;
		return rc;
	}
	r->n = n;
	for (uint32_t i = 0; i < n; i++) {
		struct xprt_call *c = &r->slot[i].call;

		c->pd = pd;
		c->hdr = xprt_pool_buf(&r->sendp, 2 * i);
		c->msg = xprt_pool_buf(&r->sendp, 2 * i + 1);
		c->lkey = rpcrdma_mr_stag(r->sendp.mr);
	}
	/* RFC 8167 §2.4.1: reverse XIDs are generated here, independently of
	 * the client's forward XIDs. */
	r->next_xid = id_seed();
	/* RFC 8167 §4.1: a window of its own, starting at one like a forward
	 * requester's (RFC 8166 §3.3.1). */
	xprt_credits_init(&r->cr, n);
	return 0;
}

void xprt_rslots_fini(struct xprt_rslots *r)
{
	if (r->slot)
		for (uint32_t i = 0; i < r->n; i++)
			xprt_call_fini(&r->slot[i].call);
	free(r->slot);
	xprt_pool_fini(&r->sendp);
	memset(r, 0, sizeof(*r));
}

struct xprt_rslot *xprt_rslots_get(struct xprt_rslots *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		struct xprt_rslot *s = &r->slot[i];

		if (s->state != XPRT_RS_FREE)
			continue;
		memset(&s->result, 0, sizeof(s->result));
		s->status = 0;
		s->deadline = s->wait_dl = 0;
		s->call.xid = r->next_xid++;
		s->seq = r->seq++;
		return s;
	}
	return NULL;
}

struct xprt_rslot *xprt_rslots_find(struct xprt_rslots *r, uint32_t xid)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->slot[i].state == XPRT_RS_WIRE && r->slot[i].call.xid == xid)
			return &r->slot[i];
	return NULL;
}

struct xprt_rslot *xprt_rslots_oldest(struct xprt_rslots *r)
{
	struct xprt_rslot *best = NULL;

	for (uint32_t i = 0; i < r->n; i++) {
		struct xprt_rslot *s = &r->slot[i];

		if (s->state == XPRT_RS_WAIT && (!best || s->seq < best->seq))
			best = s;
	}
	return best;
}

int xprt_rslot_marshal(struct xprt_rslots *r, struct xprt_rslot *s, const struct xprt_limits *lim,
		       bool chunks)
{
	struct xprt_call *c = &s->call;
	int rc;

	if (c->mr_used)
		xprt_call_fence(c, false, 0);
	if (!chunks) {
		/* RFC 8167 §5.3: without reverse chunks every message is a
		 * Short one: bulk items inline, no Reply chunk. */
		c->opts.comp_mask |= RPCRDMA_CALL_OPT_FLAGS;
		c->opts.flags |= RPCRDMA_CALL_F_NO_DDP;
		c->opts.flags &= ~(uint32_t)RPCRDMA_CALL_F_LONG;
		c->opts.comp_mask &= ~(uint32_t)RPCRDMA_CALL_OPT_REPLY_SIZE;
	}
	/* No Write chunks in the reverse direction (backchannel.h). */
	c->opts.comp_mask &= ~(uint32_t)RPCRDMA_CALL_OPT_RECV_BULK;
	rc = xprt_marshal(c, lim, 1024, r->n);
	if (rc)
		return rc;
	if (!chunks && (c->call_proc != RPCRDMA1_MSG || c->nstags)) {
		xprt_call_fence(c, false, 0);
		return -EMSGSIZE;
	}
	if (c->nsge == 2) {
		/* A server's endpoint sends one SGE per work request: the
		 * message joins its header (both fit the inline threshold,
		 * the size of the header buffer). */
		memcpy(c->hdr + c->hdr_len, c->msg, c->msg_len);
		c->sge[0].length = c->hdr_len + c->msg_len;
		c->nsge = 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reverse responder                                                   */
/* ------------------------------------------------------------------ */

int xprt_bc_read_plan(const struct rpcrdma1_hdr *h, size_t inline_len, uint64_t max_total,
		      uint32_t *p0len, struct xprt_rchunk *rc, uint32_t *nrc, uint64_t *total)
{
	const struct rpcrdma1_chunks *ch = &h->chunks;
	uint32_t start = 0, n = 0, nchunks = 0;
	uint64_t sum = 0, moved = 0, prev_ioff = 0;

	*p0len = 0;
	if (rpcrdma1_check_call(h))
		return -EINVAL;
	while (start < ch->nreads) {
		uint32_t pos, nsegs;
		uint64_t clen;

		if (rpcrdma1_read_chunk(ch, start, &pos, &nsegs, &clen) || clen > UINT32_MAX)
			return -EINVAL;
		if (pos == 0 && nchunks == 0 && h->proc == RPCRDMA1_NOMSG) {
			*p0len = (uint32_t)clen;
		} else {
			/* Positions are in the complete stream (RFC 8166
			 * §3.4.5): each at or after the end of the previous
			 * chunk's data + roundup (moved), so the splice is one
			 * pass; inline, they must lie inside the message. */
			if (n >= RPCRDMA_MAX_BULK || pos == 0 || pos < moved ||
			    pos - moved < prev_ioff)
				return -EINVAL;
			prev_ioff = pos - moved;
			if (h->proc != RPCRDMA1_NOMSG && pos - moved > inline_len)
				return -EINVAL;
			rc[n].pos = pos;
			rc[n].len = (uint32_t)clen;
			rc[n].data = NULL;
			n++;
			moved += RPCRDMA_XDR_ROUNDUP(clen);
		}
		sum += clen;
		if (sum > max_total)
			return -EINVAL;
		nchunks++;
		start += nsegs;
	}
	*nrc = n;
	*total = sum;
	return 0;
}

int xprt_bc_splice(struct rpcrdma_xdr *x, const uint8_t *base, uint32_t blen,
		   const struct xprt_rchunk *rc, uint32_t nrc)
{
	static const uint8_t zero[4];
	struct iovec iov[RPCRDMA_XDR_MAX_IOV];
	uint32_t cur = 0;
	unsigned int n = 0;

	/* At most 3 iovecs per chunk + 1 (RPCRDMA_MAX_BULK 4 -> 13 <= 16). */
	uint64_t moved = 0;

	for (uint32_t i = 0; i < nrc; i++) {
		uint32_t pad = (uint32_t)(RPCRDMA_XDR_ROUNDUP(rc[i].len) - rc[i].len);
		uint32_t pos;

		/* RFC 8166 §3.4.5: rc[i].pos counts the earlier chunks. */
		if (rc[i].pos < moved)
			return -EINVAL;
		pos = (uint32_t)(rc[i].pos - moved);
		moved += RPCRDMA_XDR_ROUNDUP(rc[i].len);
		if (pos > blen || pos < cur || (pos & 3))
			return -EINVAL;
		if (pos > cur) {
			iov[n].iov_base = (void *)(uintptr_t)(base + cur);
			iov[n++].iov_len = pos - cur;
		}
		if (rc[i].len) {
			iov[n].iov_base = rc[i].data;
			iov[n++].iov_len = rc[i].len;
		}
		if (pad) {
			iov[n].iov_base = (void *)(uintptr_t)zero;
			iov[n++].iov_len = pad;
		}
		cur = pos;
	}
	if (blen > cur) {
		iov[n].iov_base = (void *)(uintptr_t)(base + cur);
		iov[n++].iov_len = blen - cur;
	}
	if (n == 0) {
		iov[n].iov_base = (void *)(uintptr_t)zero;
		iov[n++].iov_len = 0;
	}
	return rpcrdma_xdr_init_iov(x, iov, n, RPCRDMA_XDR_DECODE);
}

int xprt_bc_encode_reply(const struct rpcrdma_rpc_reply *rep, xdrproc_t xres, void *res,
			 uint8_t *buf, size_t cap, size_t *len)
{
	struct rpcrdma_xdr x;
	XDR xdrs;

	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	if (rpcrdma_rpc_encode_reply(&x, rep))
		return -EMSGSIZE;
	if (xres) {
		/* No DDP context: bulk items are encoded inline (the reverse
		 * direction uses no Write chunks). */
		rpcrdma_tirpc_xdr_create(&xdrs, &x);
		if (!(*xres)(&xdrs, res))
			return -EMSGSIZE;
	}
	*len = rpcrdma_xdr_getpos(&x);
	return 0;
}
