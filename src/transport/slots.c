// SPDX-License-Identifier: MIT
/*
 * The reverse requester's slot table (transport/slots.h): its slots and
 * their send buffers, the reverse XID space (RFC 8167 §2.4.1) and the
 * reverse credit window (RFC 8167 §4.1), and the marshalling of a reverse
 * call under the rules of RFC 8167 §4.2 and §5.3. Lock held throughout
 * (the server's; bc_requester.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/backchannel.h"
#include "transport/slots.h"
#include "util/clock.h"

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
