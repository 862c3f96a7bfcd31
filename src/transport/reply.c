// SPDX-License-Identifier: MIT
/*
 * Reply marshalling of the server (RFC 8166 §3.5): a reply goes inline
 * (RDMA_MSG) when it fits the client's receive threshold, its bulk result
 * items (struct rpcrdma_bulk) go by RDMA Write into the Write chunks the
 * call offered, and a reply too large for inline goes by RDMA Write into
 * the Reply chunk with an RDMA_NOMSG header (a Long Reply). The Send waits
 * for the Writes (their sources are the caller's buffers). Replies the
 * progress thread sends are held and flushed once per batch.
 *
 * The encoding, the inline-or-Long choice, the echoed lengths and the
 * reply's transport header (the xprt_reply_* functions, respond.h) serve
 * the reverse responder of RFC 8167 too (bc_responder.c).
 */
#include <errno.h>
#include <sys/mman.h>
#include <time.h>

#include "rpcrdma/tirpc.h"
#include "transport/respond.h"
#include "transport/responder.h"
#include "util/probe.h"

/* Progress thread: send the held replies (one flush per connection). */
void svc_flush_held(struct rpcrdma_svc *s)
{
	futex_mutex_lock(&s->lock);
	s->nheld = 0;
	while (s->held_conns) {
		struct svc_conn *c = s->held_conns;

		s->held_conns = c->held_next;
		c->tx_held = false;
		(void)rpcrdma_ep_flush(c->ep);
	}
	futex_mutex_unlock(&s->lock);
}

struct write_ctx {
	struct svc_conn *c;
	struct rpcrdma_svc_req *r;
};

/* Post one RDMA Write of a reply and count it (its completion is awaited
 * before the reply's Send). Lock held. */
static int write_post(void *ctx, struct rpcrdma_send_wr *wr)
{
	struct write_ctx *w = ctx;
	int rc = rpcrdma_post_send(w->c->ep, wr);

	if (!rc)
		w->r->writes_pending++;
	return rc;
}

/* RDMA Write @len bytes at @base into the segments @seg[0..n) (lengths
 * rewritten to what was written, RFC 8166 §3.4.6). Lock held. */
static int write_segments(struct svc_conn *c, struct rpcrdma_svc_req *r, struct rpcrdma_mr *mr,
			  const uint8_t *base, uint64_t len, struct rpcrdma1_segment *seg,
			  uint32_t n)
{
	const struct rpcrdma_send_wr tmpl = {
	    .wr_id = svc_wrid(SVC_WR_WRITE, r->ridx),
	    .flags = RPCRDMA_SEND_SIGNALED,
	};
	struct write_ctx w = {c, r};

	return xprt_write_segments(&tmpl, write_post, &w, base, rpcrdma_mr_stag(mr), len, seg, n);
}

int xprt_reply_encode(const struct xprt_reply *rp, uint8_t *buf, size_t cap, size_t *len)
{
	struct rpcrdma_xdr x;
	XDR xdrs;

	if (rp->ddp) {
		/* handle_call() bounded nwrites by max_write_chunks */
		uint32_t nw = rp->ch->nwrites < RPCRDMA_MAX_WRITE_CHUNKS ? rp->ch->nwrites
									 : RPCRDMA_MAX_WRITE_CHUNKS;

		xprt_ddp_init(rp->ddp, XPRT_DDP_SVC_ENC);
		rp->ddp->nwrite = nw;
		for (uint32_t i = 0; i < nw; i++)
			rpcrdma1_write_chunk_length(rp->ch, i, &rp->ddp->write_cap[i]);
	}
	rpcrdma_xdr_init(&x, buf, cap, RPCRDMA_XDR_ENCODE);
	if (rpcrdma_rpc_encode_reply(&x, rp->rep))
		return -EMSGSIZE;
	if (rp->xres) {
		rpcrdma_tirpc_xdr_create(&xdrs, &x);
		if (rp->ddp)
			xprt_ddp_attach(&xdrs, rp->ddp);
		if (!(*rp->xres)(&xdrs, rp->res))
			return -EMSGSIZE;
	}
	*len = rpcrdma_xdr_getpos(&x);
	return 0;
}

/* The one STag a call exposed, or 0 (RFC 8797 §4 remote invalidation is
 * used only then: the requester cannot tell which of several we did). */
static uint32_t only_stag(const struct rpcrdma1_chunks *ch)
{
	uint32_t h = 0;

#define ONE(x)                                                                                     \
	do {                                                                                       \
		if (!h)                                                                            \
			h = (x);                                                                   \
		else if (h != (x))                                                                 \
			return 0;                                                                  \
	} while (0)
	for (uint32_t i = 0; i < ch->nreads; i++)
		ONE(ch->reads[i].seg.handle);
	for (uint32_t i = 0; i < ch->nwsegs; i++)
		ONE(ch->wsegs[i].handle);
	for (uint32_t i = 0; i < ch->nreply; i++)
		ONE(ch->reply[i].handle);
#undef ONE
	return h;
}

/*
 * Wait (lock held) until the RDMA Writes of @r completed. A Write completes
 * when TCP took its last byte, often inside rpcrdma_post_send itself: look
 * at the CQ first. On the progress thread (dispatch inline) drive the
 * device here, busy-polling before sleeping 1 ms at a time; on a worker,
 * reap what is there and sleep on done_cv, which the progress thread
 * signals (with a 1 ms bound, so a completion it has not reaped yet is
 * found by polling again).
 */
static void wait_writes(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc_req *runnow = NULL, *rev = NULL;
	bool drive = svc_on_progress_thread(s) || !s->started;
	uint32_t polls = 0;

	for (;;) {
		svc_conn_poll(c, &runnow);
		if (!r->writes_pending || c->dead)
			break;
		if (drive) {
			futex_mutex_unlock(&s->lock);
			rpcrdma_dev_progress(s->dev, polls++ < 2000 ? 0 : 1);
			futex_mutex_lock(&s->lock);
		} else {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			svc_done_wait(s, &ts);
		}
	}
	/* Calls that became ready meanwhile (built newest first): queue them
	 * oldest first, to run after this one. */
	while (runnow) {
		struct rpcrdma_svc_req *n = runnow->next;

		runnow->next = rev;
		rev = runnow;
		runnow = n;
	}
	while (rev) {
		struct rpcrdma_svc_req *n = rev->next;

		rev->next = NULL;
		if (s->qtail)
			s->qtail->next = rev;
		else
			s->qhead = rev;
		s->qtail = rev;
		if (s->workers)
			futex_cond_signal(&s->work_cv);
		rev = n;
	}
}

/* A send buffer for @r's reply (takes the lock; a worker waits for one).
 * On failure the request is over. */
static int reply_send_buf(struct svc_conn *c, struct rpcrdma_svc_req *r, uint32_t *sidx)
{
	struct rpcrdma_svc *s = c->svc;

	futex_mutex_lock(&s->lock);
	if (c->dead) {
		svc_req_end(r, false);
		futex_mutex_unlock(&s->lock);
		return -ENOTCONN;
	}
	while (svc_send_buf_get(c, sidx)) {
		if (c->dead || svc_on_progress_thread(s)) {
			svc_req_end(r, true);
			futex_mutex_unlock(&s->lock);
			return -ENOBUFS;
		}
		svc_done_wait(s, NULL);
	}
	futex_mutex_unlock(&s->lock);
	return 0;
}

int xprt_reply_marshal(const struct xprt_reply *rp, uint64_t max_long, uint8_t *sbuf, size_t hsize,
		       size_t cap, struct xprt_lbuf *lrep, size_t *mlen, bool *long_reply)
{
	uint64_t rcap = 0;
	int rc;

	if (hsize > cap)
		return -EMSGSIZE; /* not even the header fits */
	rc = xprt_reply_encode(rp, sbuf + hsize, cap - hsize, mlen);
	if (rc && rp->ch->reply_present && !rpcrdma1_reply_chunk_length(rp->ch, &rcap) && rcap &&
	    rcap <= max_long) {
		rc = xprt_lbuf_reserve(lrep, (size_t)rcap);
		if (!rc)
			rc = xprt_reply_encode(rp, lrep->buf, (size_t)rcap, mlen);
		*long_reply = rc == 0;
	}
	return rc;
}

void xprt_reply_echo(struct rpcrdma1_chunks *ch, const struct xprt_ddp *ddp, bool long_reply)
{
	bool used[RPCRDMA1_MAX_WRITE_CHUNKS] = {false};

	for (uint32_t k = 0; ddp && k < ddp->nitems; k++)
		if (ddp->items[k].pos < RPCRDMA1_MAX_WRITE_CHUNKS)
			used[ddp->items[k].pos] = true;
	for (uint32_t i = 0; i < ch->nwrites; i++)
		for (uint32_t j = 0; !used[i] && j < ch->writes[i].nsegs; j++)
			ch->wsegs[ch->writes[i].first + j].length = 0;
	for (uint32_t j = 0; !long_reply && j < ch->nreply; j++)
		ch->reply[j].length = 0;
}

int xprt_reply_hdr(uint8_t *buf, size_t hsize, uint32_t vers, uint32_t xid, uint32_t credits,
		   const struct rpcrdma1_chunks *ch, bool long_reply)
{
	struct rpcrdma_xdr hx;

	rpcrdma_xdr_init(&hx, buf, hsize, RPCRDMA_XDR_ENCODE);
	/* Draft §4.2.2: a reply travels in the REPLY direction. */
	return xprt_hdr_encode(&hx, vers, long_reply, xid, credits, RPCRDMA2_REPLY, ch);
}

/* Lock held, @r's Writes done (or flushed): drop the registrations of
 * their sources now rather than when the request slot next replies. A
 * registration pins its pages on kernel devices (siw charges them to
 * RLIMIT_MEMLOCK even for root), and kept ones added up over the
 * connection's request slots, one Reply chunk's reply each, until an
 * exposed reply could no longer be registered (issue 16). The next
 * xprt_mr_use() registers anew, as it would have. */
static void writes_unpin(struct rpcrdma_svc_req *r)
{
	if (r->writes_pending)
		return; /* still read by the device: the connection frees them */
	for (uint32_t k = 0; k < r->ddp.nitems; k++)
		if (r->wmr[k])
			rpcrdma_mr_invalidate(r->wmr[k]);
	if (r->lmr)
		rpcrdma_mr_invalidate(r->lmr);
}

/* Lock held. RDMA Writes: result bulk items into their Write chunks, then
 * the Long Reply (@mlen bytes of r->lrep) into the Reply chunk. */
static int reply_writes(struct svc_conn *c, struct rpcrdma_svc_req *r, size_t mlen, bool long_reply)
{
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma1_chunks *rch = &r->h.chunks;
	int rc = 0;

	r->writes_pending = 0;
	for (uint32_t k = 0; k < r->ddp.nitems && !rc; k++) {
		const struct xprt_ddp_item *it = &r->ddp.items[k];
		const struct rpcrdma1_write_chunk *wc = &rch->writes[it->pos];

		rc = xprt_mr_use(s->pd, &r->wmr[k], it->base, it->len, 0);
		if (!rc)
			rc = write_segments(c, r, r->wmr[k], it->base, it->len,
					    &rch->wsegs[wc->first], wc->nsegs);
		SVC_COUNT(c, write_chunks, 1);
		SVC_COUNT(c, write_bytes, it->len);
		s->st.reg_bytes += it->len;
	}
	if (!rc && long_reply) {
		rc = xprt_mr_use(s->pd, &r->lmr, r->lrep.buf, mlen, 0);
		if (!rc)
			rc = write_segments(c, r, r->lmr, r->lrep.buf, mlen, rch->reply,
					    rch->nreply);
		SVC_COUNT(c, long_replies, 1);
		SVC_COUNT(c, reply_chunks, 1);
		SVC_COUNT(c, reply_bytes, mlen);
		s->st.reg_bytes += mlen;
	}
#ifdef RPCRDMA_TEST_HOOKS
	if (!rc && r->writes_pending && s->hook.on_reply_writes &&
	    s->hook.on_reply_writes(s->hook.arg, r->h.xid)) {
		svc_conn_fail(c); /* fault test: drop between the Writes and the Send */
		rc = -ECONNABORTED;
	}
#endif
	return rc;
}

/* Lock held, the Writes done: the transport header (RDMA_MSG, or
 * RDMA_NOMSG for a Long Reply) into send buffer @sidx and its Send. */
static int reply_post(struct svc_conn *c, struct rpcrdma_svc_req *r,
		      const struct rpcrdma_rpc_reply *rep, uint32_t sidx, size_t hsize, size_t mlen,
		      uint32_t inv, bool long_reply)
{
	struct rpcrdma_svc *s = c->svc;
	int rc = xprt_reply_hdr(xprt_pool_buf(&c->sendp, sidx), hsize, r->h.vers, r->h.xid,
				svc_grant(c), &r->h.chunks, long_reply);

	if (rc || c->dead) {
		svc_send_buf_put(c, sidx);
		svc_req_end(r, !c->dead);
		return c->dead ? -ENOTCONN : rc;
	}
	/* Receive first, then the Send (transport/responder.h): both in one
	 * provider step. */
	svc_req_end(r, false);
	if (!long_reply) {
		SVC_COUNT(c, short_msgs, 1);
		SVC_COUNT(c, inline_bytes_tx, hsize + mlen);
	}
	if (inv)
		s->st.remote_invalidations++;
	RPCRDMA_PROBE(reply_send, r->h.xid, (uint32_t)long_reply, long_reply ? hsize : hsize + mlen,
		      inv);
	rc = svc_post_send(c, sidx, long_reply ? hsize : hsize + mlen, inv, r->rbuf);
	if (!rc)
		SVC_COUNT(c, replies, 1);
	if (rep->reply_stat != RPCRDMA_RPC_MSG_ACCEPTED || rep->accept_stat != RPCRDMA_RPC_SUCCESS)
		SVC_COUNT(c, rpc_errors, 1);
	return rc;
}

int svc_reply_msg(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		  void *res)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc *s = c->svc;
	/* The reply's chunk lists are the call's, rewritten in place (no
	 * second 3 KiB header per request): Write list and Reply chunk echoed
	 * (as Linux does) with the lengths written, no Read list. */
	struct rpcrdma1_chunks *rch = &r->h.chunks;
	const struct xprt_reply rp = {rep, xres, res, &r->ddp, rch};
	uint32_t sidx, inv;
	size_t hsize, mlen = 0, xcap = 0;
	uint8_t *xbuf = NULL;
	bool long_reply = false, rr = false;
	int rc;

	if (r->drc)
		svc_drc_req_done(r, rep, xres, res); /* keep it (svc_drc.c) */
	rc = reply_send_buf(c, r, &sidx);
	if (rc)
		return rc;
	/* RFC 8797 §4: Send With Invalidate names the one STag the call
	 * exposed (decided before the Read list is dropped below). */
	inv = c->lim.remote_inv ? only_stag(rch) : 0;
	rch->nreads = 0;
	/* The reply goes in the version of the call (draft §5). */
	hsize = xprt_hdr_fixed(r->h.vers) + rpcrdma1_chunks_size(rch);
	rc = xprt_reply_marshal(&rp, UINT64_MAX, xprt_pool_buf(&c->sendp, sidx), hsize,
				c->lim.inline_send, &r->lrep, &mlen, &long_reply);
	/* Fits nowhere the requester offered: a responder-provided Read
	 * chunk when reliable replies are on (exposed.c). */
	if (rc == -EMSGSIZE && svc_rr_on(c, r->h.vers)) {
		rr = true;
		rc = svc_rr_encode(c, &rp, &xbuf, &xcap, &mlen);
	}

	futex_mutex_lock(&s->lock);
	if (!rc && xbuf) {
		xprt_reply_echo(rch, &r->ddp, false);
		rc = c->dead ? -ENOTCONN : svc_rr_expose(c, r, xbuf, xcap, mlen);
		if (rc && c->dead)
			munmap(xbuf, xcap);
		long_reply = true; /* RDMA_NOMSG, the message by Read chunk */
		hsize = xprt_hdr_fixed(r->h.vers) + rpcrdma1_chunks_size(rch);
	}
	if (rc && rr && !c->dead)
		svc_rr_refused(c, r, mlen, rc, xbuf != NULL);
	if (rc || c->dead) {
		svc_send_buf_put(c, sidx);
		if (!c->dead) {
			/* RFC 8166 §4.5.2: the reply fits nowhere the
			 * requester allowed. */
			svc_send_error(c, r->h.xid, RPCRDMA1_ERR_CHUNK, r->h.vers);
		}
		svc_req_end(r, true);
		futex_mutex_unlock(&s->lock);
		return c->dead ? -ENOTCONN : -EMSGSIZE;
	}
	if (!xbuf)
		xprt_reply_echo(rch, &r->ddp, long_reply);
	rc = reply_writes(c, r, mlen, long_reply && !xbuf);
	if (rc) {
		/* The send queue is full or the connection failed mid-reply:
		 * the requester cannot trust partial placement; drop the
		 * connection (it retransmits on a new one). */
		svc_send_buf_put(c, sidx);
		wait_writes(s, r);
		writes_unpin(r);
		svc_req_end(r, false);
		svc_conn_fail(c);
		futex_mutex_unlock(&s->lock);
		return -ENOTCONN;
	}
	/* The Writes' sources are the caller's buffers: they must be read
	 * before rpcrdma_svc_reply() returns. */
	wait_writes(s, r);
	writes_unpin(r);
	rc = reply_post(c, r, rep, sidx, hsize, mlen, inv, long_reply);
	futex_mutex_unlock(&s->lock);
	return rc;
}

/*
 * The common reply (RFC 8166 §3.5.1 Short message): the call offered no
 * Write list and no Reply chunk, the reply is SUCCESS with AUTH_NONE and
 * fits inline. Headers written word by word (short.c), one lock round.
 * Returns 1 when it is not that case (nothing done: use do_reply).
 */
static int reply_short(struct rpcrdma_svc_req *r, xdrproc_t xres, void *res)
{
	struct svc_conn *c = r->conn;
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma_xdr x;
	uint8_t *sbuf;
	uint32_t sidx;
	size_t mlen = XPRT_SHORT_REPLY;
	uint32_t hl;
	int rc;

	if (r->h.chunks.nwrites || r->h.chunks.reply_present ||
	    r->call.verf.flavor != RPCRDMA_RPC_AUTH_NONE)
		return 1;
	futex_mutex_lock(&s->lock);
	if (c->dead || svc_send_buf_get(c, &sidx)) {
		futex_mutex_unlock(&s->lock);
		return 1;
	}
	sbuf = xprt_pool_buf(&c->sendp, sidx);
	if (r->h.vers == RPCRDMA1_VERSION) {
		xprt_short_rdma_msg(sbuf, r->h.xid, svc_grant(c));
		hl = XPRT_SHORT_HDR;
	} else {
		hl = xprt_v2_short_msg(sbuf, r->h.xid, svc_grant(c), RPCRDMA2_REPLY);
	}
	xprt_short_reply_hdr(sbuf + hl, r->call.xid);
	if (xres) {
		XDR xdrs;

		xprt_ddp_init(&r->ddp, XPRT_DDP_SVC_ENC);
		rpcrdma_xdr_init(&x, sbuf + hl, c->lim.inline_send - hl, RPCRDMA_XDR_ENCODE);
		rpcrdma_xdr_setpos(&x, XPRT_SHORT_REPLY);
		rpcrdma_tirpc_xdr_create(&xdrs, &x);
		xprt_ddp_attach(&xdrs, &r->ddp);
		if (!(*xres)(&xdrs, res)) {
			/* Too large for inline: the general path decides. */
			svc_send_buf_put(c, sidx);
			futex_mutex_unlock(&s->lock);
			return 1;
		}
		mlen = rpcrdma_xdr_getpos(&x);
	}
	/* Receive first, then the Send (transport/responder.h): both in
	 * one provider step. */
	svc_req_end(r, false);
	SVC_COUNT(c, short_msgs, 1);
	SVC_COUNT(c, inline_bytes_tx, hl + mlen);
	RPCRDMA_PROBE(reply_send, r->h.xid, RPCRDMA1_MSG, hl + mlen, 0);
	rc = svc_post_send(c, sidx, hl + mlen, 0, r->rbuf);
	if (!rc)
		SVC_COUNT(c, replies, 1);
	futex_mutex_unlock(&s->lock);
	return rc;
}

int svc_reply_results(struct rpcrdma_svc_req *r, xdrproc_t xres, void *res)
{
	struct rpcrdma_rpc_reply rep;
	int rc;

	if (r->drc) {
		/* keep it (svc_drc.c) */
		rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_SUCCESS);
		svc_drc_req_done(r, &rep, xres, res);
	}
	rc = reply_short(r, xres, res);
	if (rc != 1)
		return rc;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_SUCCESS);
	return svc_reply_msg(r, &rep, xres, res);
}
