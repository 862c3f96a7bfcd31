// SPDX-License-Identifier: MIT
/*
 * Reliable replies, the requester's side (draft-cel-nfsv4-rpcrdma-reliable-
 * reply; docs/reliable-replies.md): a reply that arrives as RDMA_NOMSG with
 * a Position-Zero Read chunk is pulled with RDMA Reads into memory of the
 * call slot's own, decoded as a Long Reply would be, and then the responder
 * is told it may invalidate the chunk: RDMA_DONE (RFC 5666) in Version
 * One, our pull-completion optional message in Version Two, with Send With
 * Invalidate of the chunk's STag when both sides use remote invalidation.
 * A reply for a call no longer waited for (timed out, abandoned, unknown
 * XID) is notified without being pulled.
 *
 * Reads: at most our ORD (bounded by the responder's IRD, RFC 6581 §9) at
 * once over all pulls, oldest reply first, as the server's pull.c keeps
 * its Reads within the client's IRD; the work request is rdma_rw.c's.
 * Credits (RFC 5666 §3.8 and the draft: a notification consumes a credit;
 * docs/reliable-replies.md §5): the call keeps its credit until its pull
 * ends, and its notification is then sent on that same credit, which
 * stays counted on the wire ("held") until a reply arrives to a call
 * transmitted after the notification: the responder processed the
 * notification (and re-posted its receive) before that call. When held
 * notifications take every credit granted, no such reply can come, and
 * the oldest one whose Send completed gives its credit back.
 *
 * Direction (RFC 8167 §4.1): with a backchannel, an RDMA_NOMSG with a
 * Position-Zero Read chunk is a forward reply or a reverse Long Call,
 * told apart only by the pulled message's msg_type. requester.c sends it
 * here when its XID matches a forward call on the wire; should the pulled
 * message be a CALL (the XIDs of the two directions may collide, §2.4.1),
 * it goes to the backchannel as received and the forward call stays on
 * the wire.
 * Lock held throughout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/backchannel_hooks.h"
#include "transport/requester.h"
#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"
#include "util/probe.h"

/* Largest reply pulled (beyond: the call fails with -EMSGSIZE). */
#define CLNT_RR_MAX (1ull << 30)
/* Reads in flight at most (also bounded by the connection's ORD). */
#define CLNT_RR_ORD 16u
/* Notification buffers beyond one per slot (unknown XIDs). */
#define CLNT_RR_SPARE 4u
#define CLNT_RR_NBUF  64u

/* One slot's pull. */
struct clnt_rr_pull {
	bool pulling;
	uint32_t gen, xid, vers;
	uint32_t stag; /* the chunk's one STag (Send With Invalidate), or 0 */
	uint32_t nseg, next, pending;
	uint64_t total, off;
	struct rpcrdma1_segment seg[RPCRDMA1_MAX_READ_SEGS];
	struct rpcrdma1_hdr h; /* the reply's header, Read list removed */
	struct xprt_lbuf buf;
	struct rpcrdma_mr *mr;
	struct clnt_slot *qnext;
	/* with a backchannel: the message as received, for the backchannel
	 * should the pulled one be a CALL */
	struct xprt_lbuf raw;
	size_t raw_len;
	/* with a backchannel: a second such message of the same XID that
	 * came during the pull (one of the two is a reverse call) */
	struct xprt_lbuf stash;
	size_t stash_len;
};

/* A notification holding its call's credit (FIFO, oldest first). */
struct clnt_rr_held {
	uint32_t epoch; /* c->rr_epoch it was sent at */
	uint32_t buf;   /* its send buffer */
	bool sent;      /* its Send completed */
};

struct clnt_rr {
	uint32_t gen; /* the connection the state below belongs to */
	uint32_t ord, inflight;
	bool ord_known;
	struct clnt_slot *qhead, *qtail;
	struct xprt_pool np; /* notification send buffers */
	uint32_t nbuf, nfree;
	uint32_t *free;
	struct clnt_rr_held *held; /* ring of nbuf */
	uint32_t hhead, hn;
};

int clnt_rr_init(struct rpcrdma_clnt *c, uint32_t *wrs)
{
	struct clnt_rr *rr = calloc(1, sizeof(*rr));
	int rc;

	if (!rr)
		return -ENOMEM;
	rr->nbuf = c->nslots + CLNT_RR_SPARE;
	rr->free = calloc(rr->nbuf, sizeof(*rr->free));
	rr->held = calloc(rr->nbuf, sizeof(*rr->held));
	rc =
	    rr->free && rr->held ? xprt_pool_init(&rr->np, c->pd, rr->nbuf, CLNT_RR_NBUF) : -ENOMEM;
	if (rc) {
		free(rr->free);
		free(rr->held);
		free(rr);
		return rc;
	}
	rr->gen = c->gen - 1u; /* the first connection resets the state */
	c->rr = rr;
	*wrs = rr->nbuf + CLNT_RR_ORD;
	return 0;
}

void clnt_rr_fini(struct rpcrdma_clnt *c)
{
	for (uint32_t i = 0; c->slots && i < c->nslots; i++) {
		struct clnt_rr_pull *p = c->slots[i].rr;

		if (!p)
			continue;
		if (p->mr)
			rpcrdma_mr_dereg(p->mr);
		xprt_lbuf_fini(&p->buf);
		xprt_lbuf_fini(&p->raw);
		xprt_lbuf_fini(&p->stash);
		free(p);
		c->slots[i].rr = NULL;
	}
	if (!c->rr)
		return;
	xprt_pool_fini(&c->rr->np);
	free(c->rr->free);
	free(c->rr->held);
	free(c->rr);
	c->rr = NULL;
}

/* A new connection: what the last one had in flight is gone with it (its
 * calls go again, reconnect.c). */
static void sync_gen(struct rpcrdma_clnt *c)
{
	struct clnt_rr *rr = c->rr;

	if (rr->gen == c->gen)
		return;
	rr->gen = c->gen;
	rr->ord_known = false;
	rr->inflight = 0;
	rr->qhead = rr->qtail = NULL;
	rr->hhead = rr->hn = 0;
	c->rr_held = 0; /* the credits went with the connection */
	rr->nfree = rr->nbuf;
	for (uint32_t i = 0; i < rr->nbuf; i++)
		rr->free[i] = i;
	for (uint32_t i = 0; i < c->nslots; i++)
		if (c->slots[i].rr) {
			c->slots[i].rr->pulling = false;
			c->slots[i].rr->stash_len = 0;
		}
}

/* The one STag of the Read list, or 0 when it names several. */
static uint32_t only_stag(const struct rpcrdma1_chunks *ch)
{
	uint32_t h = ch->nreads ? ch->reads[0].seg.handle : 0;

	for (uint32_t i = 1; i < ch->nreads; i++)
		if (ch->reads[i].seg.handle != h)
			return 0;
	return h;
}

/* Give back the credit of the oldest held notification. */
static void held_pop(struct rpcrdma_clnt *c)
{
	struct clnt_rr *rr = c->rr;

	rr->hhead = (rr->hhead + 1u) % rr->nbuf;
	rr->hn--;
	c->rr_held--;
	xprt_credits_done(&c->cr);
	c->st.outstanding = c->cr.on_wire;
}

/* Held notifications taking every credit granted: no call can go, so no
 * reply can come to give them back. The oldest whose Send completed gives
 * its credit back (RFC 5666 §3.8 asks the responder to grant enough for
 * this not to happen). */
static void held_starved(struct rpcrdma_clnt *c)
{
	struct clnt_rr *rr = c->rr;

	while (rr->hn && c->rr_held >= c->cr.grant && rr->held[rr->hhead].sent)
		held_pop(c);
}

/* Pull completion for @xid, version @vers (the reply's), dropped (the
 * responder reclaims) when no buffer is free. @hold: sent on the credit of
 * the call it ends, which the caller did not give back; true when the
 * notification holds it now, false when the credit is given back here. */
static bool notify(struct rpcrdma_clnt *c, uint32_t xid, uint32_t vers, uint32_t stag, bool hold)
{
	struct clnt_rr *rr = c->rr;
	struct rpcrdma_send_wr wr = {0};
	struct rpcrdma_sge sge;
	struct rpcrdma_xdr x;
	uint8_t opt[RPCRDMA2_PULL_DONE_SIZE];
	uint32_t i, olen;
	int rc;

	if (!rr->nfree || c->state != C_UP) {
		c->st.dropped_msgs++;
		goto nohold;
	}
	i = rr->free[--rr->nfree];
	rpcrdma_xdr_init(&x, xprt_pool_buf(&rr->np, i), CLNT_RR_NBUF, RPCRDMA_XDR_ENCODE);
	if (vers == RPCRDMA2_VERSION)
		rc = rpcrdma2_pull_done_encode(opt, sizeof(opt), xid, &olen) ||
		     rpcrdma2_encode_optional(&x, xid, c->nslots, RPCRDMA2_CALL,
					      RPCRDMA2_OPTTYPE_PULL_DONE, opt, olen);
	else
		rc = rpcrdma1_encode_done(&x, xid, c->nslots);
	sge = xprt_pool_sge(&rr->np, i, 0, rpcrdma_xdr_getpos(&x));
	wr.wr_id = clnt_wrid(c->gen, CLNT_WR_RR_DONE, i);
	wr.opcode = RPCRDMA_WR_SEND;
	wr.flags = RPCRDMA_SEND_SIGNALED;
	wr.sg = &sge;
	wr.num_sge = 1;
	/* The draft: with remote invalidation on both sides, exactly the
	 * responder's STag. */
	if (c->lim.remote_inv && stag) {
		wr.flags |= RPCRDMA_SEND_INVALIDATE;
		wr.invalidate_stag = stag;
	}
	if (!rc)
		rc = rpcrdma_post_send(c->ep, &wr);
	if (rc) {
		rr->free[rr->nfree++] = i;
		c->st.dropped_msgs++;
		goto nohold;
	}
	c->st.rr_notifications++;
	RPCRDMA_PROBE(rr_notify, xid, vers, wr.invalidate_stag, (uint32_t)hold);
	if (!hold)
		return false;
	/* Calls transmitted from now on carry a later epoch (transmit). */
	rr->held[(rr->hhead + rr->hn) % rr->nbuf] =
	    (struct clnt_rr_held){.epoch = ++c->rr_epoch, .buf = i, .sent = false};
	rr->hn++;
	c->rr_held++;
	return true;
nohold:
	if (hold) {
		xprt_credits_done(&c->cr);
		c->st.outstanding = c->cr.on_wire;
	}
	return false;
}

bool clnt_rr_notify_hdr(struct rpcrdma_clnt *c, const struct rpcrdma1_hdr *h, bool hold)
{
	sync_gen(c);
	return notify(c, h->xid, h->vers, only_stag(&h->chunks), hold);
}

void clnt_rr_reply_seen(struct rpcrdma_clnt *c, const struct clnt_slot *s)
{
	struct clnt_rr *rr = c->rr;

	sync_gen(c);
	/* Sends arrive in order: the responder saw every notification sent
	 * before @s's call, and re-posted their receives before it answered. */
	while (rr->hn && (int32_t)(s->rr_epoch - rr->held[rr->hhead].epoch) >= 0)
		held_pop(c);
	held_starved(c);
}

/* The pull of @s ended with @st and was notified (notify() took or gave
 * back its credit): the call leaves the wire, its reply is decoded (st 0)
 * and it completes, as handle_reply does for other replies. */
static void finish(struct rpcrdma_clnt *c, struct clnt_slot *s, int st, struct cb_list *cbl)
{
	struct clnt_rr_pull *p = s->rr;

	/* No Read of it is in flight now: unregister the buffer rather than
	 * keep it pinned until the slot pulls again (a kernel device charges
	 * pins to RLIMIT_MEMLOCK; one kept per slot adds up, issue 16). */
	if (p && p->mr)
		rpcrdma_mr_invalidate(p->mr);
	s->on_wire = false;
	if (s->zombie) {
		clnt_slot_free(c, s);
		return;
	}
	if (s->done)
		return;
	if (s->call.mr_used)
		c->st.local_invalidations += xprt_call_fence(&s->call, false, 0);
	if (!st) {
		s->call.rr_msg = p->buf.buf;
		s->call.rr_len = (size_t)p->total;
		st = xprt_reply_process(&s->call, NULL, 0, &p->h, &s->result);
		s->call.rr_msg = NULL;
		c->st.rr_replies++;
		c->st.read_bytes += p->total;
		if (st == -EBADMSG)
			c->st.decode_errors++;
		else if (st)
			c->st.rpc_errors++;
	}
	c->st.replies++;
	RPCRDMA_PROBE(reply_recv, s->call.xid, RPCRDMA1_NOMSG, c->cr.grant, st);
	clnt_slot_complete(c, s, st, cbl);
}

/* Post queued Reads, oldest reply first, within the Read depth. */
static void reads_post(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	struct clnt_rr *rr = c->rr;

	if (!rr->ord_known) {
		struct rpcrdma_ep_conn_info ci;

		rr->ord = rpcrdma_ep_query_conn(c->ep, &ci) ? 1u : ci.ord;
		if (rr->ord > CLNT_RR_ORD)
			rr->ord = CLNT_RR_ORD;
		rr->ord_known = true;
	}
	while (rr->qhead && rr->inflight < rr->ord && c->state == C_UP) {
		struct clnt_slot *s = rr->qhead;
		struct clnt_rr_pull *p = s->rr;
		const struct rpcrdma1_segment *sg = &p->seg[p->next];
		struct rpcrdma_send_wr wr;
		struct rpcrdma_sge sge;
		int rc;

		xprt_read_wr(&wr, &sge, clnt_wrid(c->gen, CLNT_WR_RR_READ, s->index), sg,
			     p->buf.buf + p->off, rpcrdma_mr_stag(p->mr));
		rc = rpcrdma_post_send(c->ep, &wr);
		if (rc == -ENOMEM)
			break; /* the send queue is full: a completion resumes */
		if (rc) {
			clnt_conn_lost(c, cbl);
			return;
		}
		p->next++;
		p->off += sg->length;
		rr->inflight++;
		if (p->next == p->nseg) {
			rr->qhead = p->qnext;
			if (!rr->qhead)
				rr->qtail = NULL;
			p->qnext = NULL;
		}
	}
}

/* Check the Read list of @h and set up @p's pull. 0 or the call's error. */
static int pull_setup(struct rpcrdma_clnt *c, struct clnt_rr_pull *p, const struct rpcrdma1_hdr *h)
{
	const struct rpcrdma1_chunks *ch = &h->chunks;
	uint64_t total = 0;
	int rc;

	/* The draft: one Position-Zero Read chunk carries the whole reply. */
	for (uint32_t i = 0; i < ch->nreads; i++) {
		if (ch->reads[i].position != 0)
			return -EBADMSG;
		total += ch->reads[i].seg.length;
		p->seg[i] = ch->reads[i].seg;
	}
	if (total > CLNT_RR_MAX)
		return -EMSGSIZE;
	rc = xprt_lbuf_reserve(&p->buf, total ? (size_t)total : 1u);
	if (!rc)
		rc = xprt_mr_use(c->pd, &p->mr, p->buf.buf, (size_t)total,
				 RPCRDMA_ACCESS_LOCAL_WRITE);
	if (rc)
		return rc;
	c->st.reg_bytes += total;
	p->h = *h;
	p->h.chunks.nreads = 0;
	p->nseg = ch->nreads;
	p->next = 0;
	p->pending = ch->nreads;
	p->total = total;
	p->off = 0;
	p->xid = h->xid;
	p->vers = h->vers;
	p->stag = only_stag(ch);
	p->gen = c->gen;
	return 0;
}

/* RFC 8167 §4.1, §2.4.1: with a backchannel, is the message pulled for
 * @s a CALL, a reverse Long Call whose XID is that of a forward call on
 * the wire? It then goes to the backchannel as received (which pulls it
 * again: nothing is notified) and @s stays on the wire with its credit. */
static bool pulled_call(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	struct clnt_rr_pull *p = s->rr;
	const uint8_t *m = p->buf.buf;

	if (!c->bc || !p->raw_len || p->total < 8 || (m[4] | m[5] | m[6] | m[7]))
		return false;
	if (p->mr)
		rpcrdma_mr_invalidate(p->mr);
	c->st.unexpected_calls++;
	(void)bc_clnt_recv(c->bc, p->raw.buf, p->raw_len);
	return true;
}

bool clnt_rr_start(struct rpcrdma_clnt *c, struct clnt_slot *s, const struct rpcrdma1_hdr *h,
		   const uint8_t *buf, size_t len, struct cb_list *cbl)
{
	struct clnt_rr *rr = c->rr;
	struct clnt_rr_pull *p;
	int rc;

	sync_gen(c);
	if (!s->rr)
		s->rr = calloc(1, sizeof(*s->rr));
	p = s->rr;
	if (p && p->pulling) {
		/* Another message of this XID during the pull. With a
		 * backchannel one of the two is a reverse call: kept until the
		 * pull tells which (pull_end). Else a duplicate: notified, as
		 * a reply no call waits for. */
		if (c->bc && !p->stash_len && !xprt_lbuf_reserve(&p->stash, len)) {
			memcpy(p->stash.buf, buf, len);
			p->stash_len = len;
		} else {
			c->st.dropped_msgs++;
			if (!c->bc)
				(void)clnt_rr_notify_hdr(c, h, false);
		}
		return false;
	}
	rc = p ? pull_setup(c, p, h) : -ENOMEM;
	if (rc) {
		/* The draft: notify even when nothing was pulled. */
		notify(c, h->xid, h->vers, only_stag(&h->chunks), true);
		finish(c, s, rc, cbl);
		return true;
	}
	p->raw_len = 0;
	if (c->bc && !xprt_lbuf_reserve(&p->raw, len)) {
		memcpy(p->raw.buf, buf, len);
		p->raw_len = len;
	}
	p->pulling = true;
	p->qnext = NULL;
	if (rr->qtail)
		rr->qtail->rr->qnext = s;
	else
		rr->qhead = s;
	rr->qtail = s;
	reads_post(c, cbl);
	return true;
}

/* Every Read of @s's pull completed: a reverse call (to the backchannel;
 * a message of the same XID kept meanwhile is then pulled as the reply),
 * else the reply: notified, the call completed (and a message kept
 * meanwhile is the reverse call). */
static void pull_end(struct rpcrdma_clnt *c, struct clnt_slot *s, struct cb_list *cbl)
{
	struct clnt_rr_pull *p = s->rr;
	size_t kept = p->stash_len;

	p->pulling = false;
	p->stash_len = 0;
	if (pulled_call(c, s)) {
		/* (clnt_rr_start copies the stash to raw before reusing it) */
		if (kept && !rpcrdma1_decode_buf(p->stash.buf, kept, &c->rh) &&
		    clnt_rr_reply(c, &c->rh) && c->rh.xid == p->xid)
			(void)clnt_rr_start(c, s, &c->rh, p->stash.buf, kept, cbl);
		return;
	}
	if (kept)
		(void)bc_clnt_recv(c->bc, p->stash.buf, kept);
	if (c->bc) {
		/* a reply after all: its credit counts now (requester.c left
		 * it, RFC 8167 §4.1) */
		xprt_credits_update(&c->cr, p->h.credit);
		c->st.credits = c->cr.grant;
		clnt_rr_reply_seen(c, s);
	}
	/* The draft: after the Reads, pull completion. */
	RPCRDMA_PROBE(rr_pull, p->xid, p->total, p->nseg);
	notify(c, p->xid, p->vers, p->stag, true);
	finish(c, s, 0, cbl);
}

void clnt_rr_wc(struct rpcrdma_clnt *c, const struct rpcrdma_wc *wc, struct cb_list *cbl)
{
	uint32_t kind = (uint32_t)(wc->wr_id >> 24) & 0xff;
	uint32_t idx = (uint32_t)wc->wr_id & 0xffffff;
	struct clnt_rr *rr = c->rr;
	struct clnt_slot *s;
	struct clnt_rr_pull *p;

	sync_gen(c);
	if (kind == CLNT_WR_RR_DONE) {
		if (idx < rr->nbuf && rr->nfree < rr->nbuf)
			rr->free[rr->nfree++] = idx;
		for (uint32_t k = 0; k < rr->hn; k++)
			if (rr->held[(rr->hhead + k) % rr->nbuf].buf == idx)
				rr->held[(rr->hhead + k) % rr->nbuf].sent = true;
		held_starved(c);
		return;
	}
	if (rr->inflight)
		rr->inflight--;
	s = idx < c->nslots ? &c->slots[idx] : NULL;
	p = s ? s->rr : NULL;
	if (p && p->pulling && p->gen == c->gen && --p->pending == 0) {
		pull_end(c, s, cbl);
	}
	if (c->state == C_UP)
		reads_post(c, cbl);
}
