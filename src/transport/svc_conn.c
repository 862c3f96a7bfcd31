// SPDX-License-Identifier: MIT
/*
 * The server's connections (transport/responder.h has the objects): a
 * connection is accepted with its share of the shared CQ, its first
 * credit in the shared receive pool (svc_srq.c) or a receive pool of its
 * own whose buffers are all posted (either way the credit grant of RFC
 * 8166 §3.3.1 is backed by posted receives), and a send pool. This file posts and recycles them: send
 * signalling (every SVC_SIGNAL_EVERY-th Send, the drain marker once a
 * connection is down), RDMA_ERROR refusals (RFC 8166 §4.5), the RFC 8167
 * direction demux of a received message (reverse replies go to the
 * backchannel, calls are checked here and go on to the pull or the
 * dispatch), the completions of a connection, and its teardown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/backchannel_hooks.h"
#include "transport/responder.h"
#include "util/clock.h"
#include "util/log.h"

/* ------------------------------------------------------------------ */
/* Sending (lock held)                                                 */
/* ------------------------------------------------------------------ */

/* A Send completed (signaled, or flushed): it and every Send posted
 * before it are done with their buffers. SVC_DRAIN_IDX: all of them. */
static void send_done(struct svc_conn *c, uint32_t idx)
{
	uint32_t n = svc_nsend(c), k = 0;

	if (idx != SVC_DRAIN_IDX) {
		while (k < c->ninfl && c->sinfl[(c->infl_head + k) % n] != idx)
			k++;
		if (k == c->ninfl)
			return; /* freed already (by a later completion) */
		k++;
	} else {
		k = c->ninfl;
	}
	while (k--) {
		svc_send_buf_put(c, c->sinfl[c->infl_head]);
		c->infl_head = (c->infl_head + 1) % n;
		c->ninfl--;
	}
}

/* The connection is down: a signaled marker after the Sends still
 * unaccounted for; its flush completion frees their buffers. */
static void send_drain(struct svc_conn *c)
{
	struct rpcrdma_send_wr wr = {
	    .wr_id = svc_wrid(SVC_WR_SEND, SVC_DRAIN_IDX),
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = RPCRDMA_SEND_SIGNALED,
	};

	if (c->ninfl && rpcrdma_post_send(c->ep, &wr))
		send_done(c, SVC_DRAIN_IDX); /* nothing can complete any more */
}

/* Post the Send of send buffer @sidx; with @ridx >= 0, receive buffer
 * @ridx is re-posted first, in the same provider step (the receive is in
 * place before the reply leaves; see the top of this file). */
int svc_post_send(struct svc_conn *c, uint32_t sidx, size_t len, uint32_t inv_stag, int64_t ridx)
{
	struct rpcrdma_sge sge = xprt_pool_sge(&c->sendp, sidx, 0, len);
	bool sig = c->unsig + 1 >= SVC_SIGNAL_EVERY || c->nsfree < SVC_SIGNAL_EVERY;
	struct rpcrdma_send_wr wr = {
	    .wr_id = svc_wrid(SVC_WR_SEND, sidx),
	    .opcode = RPCRDMA_WR_SEND,
	    .flags = sig ? RPCRDMA_SEND_SIGNALED : 0,
	    .sg = &sge,
	    .num_sge = 1,
	};
	int rc;

	if (inv_stag) {
		wr.flags |= RPCRDMA_SEND_INVALIDATE;
		wr.invalidate_stag = inv_stag;
	}
	if (svc_on_progress_thread(c->svc) && !c->svc->batch_last) {
		wr.flags |= RPCRDMA_SEND_DEFER; /* progress_main flushes */
		svc_conn_hold_tx(c);
		if (!c->svc->nheld++)
			c->svc->held_since = monotonic_ns();
	}
	if (ridx >= 0 && c->svc->srq) {
		/* the shared queue: given back first, then the Send */
		svc_srq_repost(c->svc, (uint32_t)ridx);
		rc = xprt_post_send(c->ep, &wr);
	} else if (ridx >= 0) {
		struct rpcrdma_sge rs = xprt_pool_sge(&c->recvp, (uint32_t)ridx, 0, c->recvp.size);
		struct rpcrdma_recv_wr rw = {
		    .wr_id = svc_wrid(SVC_WR_RECV, (uint32_t)ridx), .sg = &rs, .num_sge = 1};
		unsigned int np = 0;

		rc = xprt_post_send_recv(c->ep, &wr, &rw, 1, &np);
		if (np < 1) {
			/* the receive failed, the Send was not posted */
			rpcrdma_disconnect(c->ep);
			rc = rc ? rc : -EIO;
		}
	} else {
		rc = rpcrdma_post_send(c->ep, &wr);
	}
	if (rc) {
		svc_send_buf_put(c, sidx);
		return rc;
	}
	c->sinfl[(c->infl_head + c->ninfl++) % svc_nsend(c)] = sidx;
	c->unsig = sig ? 0 : c->unsig + 1;
	return 0;
}

/* RFC 8166 §4.5: answer a call we will not run. */
void svc_send_error(struct svc_conn *c, uint32_t xid, uint32_t err, uint32_t vers)
{
	struct rpcrdma_svc *s = c->svc;
	uint8_t *buf;
	uint32_t sidx;
	int len;

	if (c->dead || svc_send_buf_get(c, &sidx))
		return;
	buf = xprt_pool_buf(&c->sendp, sidx);
	if (err == RPCRDMA1_ERR_VERS) /* == RPCRDMA2_ERR_VERS, the same words */
		/* RFC 8166 §4.5.1: our range in the body; the fixed words
		 * echo the call's rdma_vers, a version the requester decodes
		 * (RFC 5666 §4.2, Version Two draft §5.3), as Linux does. */
		len = xprt_encode_err_vers(buf, c->sendp.size, xid, vers, svc_grant(c),
					   s->v2 ? RPCRDMA2_VERSION : RPCRDMA1_VERSION);
	else if (s->v2 && vers != RPCRDMA1_VERSION)
		len = xprt_v2_encode_error(buf, c->sendp.size, xid, svc_grant(c), err);
	else
		len = xprt_encode_error(buf, c->sendp.size, xid, svc_grant(c), err);
	if (len < 0 || svc_post_send(c, sidx, (size_t)len, 0, -1)) {
		return;
	}
	RPCRDMA_PROBE(error_send, RPCRDMA_PROBE_SERVER, xid, err, vers);
	RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer, "RDMA_ERROR %s sent for xid %#x",
		  err == RPCRDMA1_ERR_VERS ? "ERR_VERS" : "ERR_CHUNK", xid);
	if (err == RPCRDMA1_ERR_VERS)
		SVC_COUNT(c, err_vers_tx, 1);
	else
		SVC_COUNT(c, err_chunk_tx, 1);
}

static void repost_recv(struct svc_conn *c, uint32_t idx)
{
	if (c->svc->srq)
		svc_srq_repost(c->svc, idx); /* the server's, dead connection or not */
	else if (!c->dead && xprt_pool_post_recv(&c->recvp, c->ep, idx, svc_wrid(SVC_WR_RECV, idx)))
		rpcrdma_disconnect(c->ep);
}

/* The request is over: give back its receive buffer and credit. */
void svc_req_end(struct rpcrdma_svc_req *r, bool repost)
{
	struct svc_conn *c = r->conn;

	if (!r->held)
		return;
	r->held = false;
	if (r->drc)
		svc_drc_req_abandon(r); /* ended without a reply (svc_drc.c) */
	if (r->pull_need)
		svc_pull_release(c->svc, r);
	if (c->svc->pull_kick_needed && !c->svc->in_pull_kick)
		svc_pull_kick(c->svc);
	if (repost)
		repost_recv(c, r->rbuf);
	if (c->rfree)
		c->rfree[c->nrfree++] = r->ridx;
	c->held--;
	c->svc->st.outstanding--;
	svc_done_wake(c->svc);
}

/* Refuse: answer with RDMA_ERROR (or drop), give the receive back. */
void svc_refuse(struct svc_conn *c, struct rpcrdma_svc_req *r, uint32_t err)
{
	if (err)
		svc_send_error(c, r->h.xid, err, r->h.vers);
	svc_req_end(r, true);
}

/* ------------------------------------------------------------------ */
/* Receiving a call (progress thread, lock held)                       */
/* ------------------------------------------------------------------ */

/* The request a message in receive buffer @idx becomes: request @idx of
 * a per-connection pool, or any free slot with the shared pool (none
 * free: more calls than the credits granted, RFC 8166 §3.3.1, and the
 * connection is cut off). Allocated on first use (see responder.h). NULL:
 * dropped, the buffer given back. */
static struct rpcrdma_svc_req *req_for(struct svc_conn *c, uint32_t idx)
{
	struct rpcrdma_svc_req *r;
	uint32_t slot = idx;

	if (c->rfree) {
		if (!c->nrfree) {
			RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer,
				  "more calls than the %u credits granted", c->grant);
			SVC_COUNT(c, bad_headers, 1);
			if (!c->dead)
				c->svc->st.conn_errors++; /* as the provider's NOBUF Terminate */
			repost_recv(c, idx);
			svc_conn_fail(c);
			return NULL;
		}
		slot = c->rfree[--c->nrfree];
	}
	r = c->reqs[slot];
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			if (c->rfree) {
				c->rfree[c->nrfree++] = slot;
				repost_recv(c, idx); /* the shared pool's */
			}
			svc_conn_fail(c); /* the call cannot even be refused */
			return NULL;
		}
		r->conn = c;
		r->ridx = slot;
		c->reqs[slot] = r;
	}
	r->rbuf = idx;
	return r;
}

/* A message arrived in receive buffer @idx: a reverse reply for the
 * backchannel, or a call to check, pull and dispatch. */
static void handle_call(struct svc_conn *c, uint32_t idx, uint32_t len,
			struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_svc *s = c->svc;
	const uint8_t *buf = xprt_pool_buf(c->rpool, idx);
	struct rpcrdma_svc_req *r;
	struct rpcrdma1_chunks *ch;
	uint64_t total = 0, w;
	uint32_t nchunks = 0;
	int rc;

	/* RFC 8167 §4.1: a reverse Reply (or an RDMA_ERROR answering a reverse
	 * call) lands in any receive buffer; the backchannel takes it and the
	 * buffer goes straight back to the receive queue. */
	if (c->bc && bc_svc_recv(c->bc, buf, len)) {
		repost_recv(c, idx);
		return;
	}
	r = req_for(c, idx);
	if (!r)
		return;
	ch = &r->h.chunks;
	r->held = true;
	r->recv_len = len;
	r->nrc = 0;
	r->p0len = 0;
	r->stage = NULL;
	r->stage_len = 0;
	r->pull_need = 0;
	r->pull_over = false;
	c->held++;
	s->st.outstanding++;
	if (s->st.outstanding > s->st.max_outstanding)
		s->st.max_outstanding = s->st.outstanding;
	SVC_COUNT(c, inline_bytes_rx, len);
#ifdef RPCRDMA_TEST_HOOKS
	if (s->hook.on_recv)
		s->hook.on_recv(s->hook.arg, buf, len);
#endif
	if (s->stopping) {
		svc_refuse(c, r, 0);
		return;
	}
	if (len < RPCRDMA1_FIXED_SIZE) {
		SVC_COUNT(c, bad_headers, 1);
		svc_refuse(c, r, 0); /* nothing to answer to */
		return;
	}
	/* The common Short call word by word (short.c): RDMA_MSG without
	 * chunks, for which none of the checks below can fail; else in full. */
	if (xprt_short_decode_hdr(buf, len, &r->h)) {
		RPCRDMA_PROBE(call_recv, r->h.xid, r->h.vers, r->h.proc, r->h.credit, len);
		r->msg_len = len - (uint32_t)r->h.hdr_len;
		svc_queue_ready(s, r, runnow);
		return;
	}
	rc = rpcrdma1_decode_buf(buf, len, &r->h);
	if (rc == -EPROTONOSUPPORT && s->v2) {
		/* Not Version One: Version Two's checks (svc_vers.c). */
		rc = svc_v2_recv(c, r, buf, len);
		if (rc > 0)
			return; /* answered or dropped */
	}
	if (rc == -EPROTONOSUPPORT) {
		/* RFC 8166 §4.5.1: whatever follows, answer ERR_VERS. */
		SVC_COUNT(c, bad_headers, 1);
		svc_refuse(c, r, RPCRDMA1_ERR_VERS);
		return;
	}
	if (r->h.proc == RPCRDMA1_DONE && !rc && s->rr)
		svc_rr_done(c, r->h.xid, c->rr_inv); /* RFC 5666 pull completion */
	if (r->h.proc == RPCRDMA1_DONE || r->h.proc == RPCRDMA1_ERROR) {
		/* A requester's DONE/ERROR: dropped silently, as Linux does. */
		if (r->h.proc == RPCRDMA1_ERROR)
			RPCRDMA_PROBE(error_recv, RPCRDMA_PROBE_SERVER, r->h.xid, r->h.err,
				      r->h.vers);
		s->st.dropped_msgs++;
		svc_refuse(c, r, 0);
		return;
	}
	if (rc || r->h.proc == RPCRDMA1_MSGP || rpcrdma1_check_call(&r->h)) {
		/* RFC 8166 §4.5.2: unparseable header or unusable chunks
		 * (MSGP too: Linux answers it ERR_CHUNK). */
		SVC_COUNT(c, bad_headers, 1);
		svc_refuse(c, r, RPCRDMA1_ERR_CHUNK);
		return;
	}
	RPCRDMA_PROBE(call_recv, r->h.xid, r->h.vers, r->h.proc, r->h.credit, len);
	/* Read chunks at their positions (splice.c); none in the common call. */
	if (ch->nreads && svc_splice_plan(r, &nchunks, &total))
		goto chunk_err;
	/* The Write list, bounded by max_write_chunks (RFC 8166 §4.5.2:
	 * chunks we cannot use get ERR_CHUNK). */
	if (ch->nwrites > s->max_wchunks)
		goto chunk_err;
	if (total > s->max_chunk || rpcrdma1_write_list_length(ch, &w) || w > s->max_chunk ||
	    rpcrdma1_reply_chunk_length(ch, &w) || w > s->max_chunk)
		goto chunk_err;
	r->msg_len = r->h.proc == RPCRDMA1_MSG ? len - (uint32_t)r->h.hdr_len : r->p0len;
	if (r->nrc && r->rc[r->nrc - 1].ioff > r->msg_len)
		goto chunk_err; /* position out of range */
	if (!nchunks) {
		svc_queue_ready(s, r, runnow);
		return;
	}
	svc_splice_size(r);
	SVC_COUNT(c, read_chunks, nchunks);
	SVC_COUNT(c, read_bytes, total);
	if (r->p0len)
		SVC_COUNT(c, long_calls, 1);
	svc_pull_or_queue(c, r);
	return;
chunk_err:
	SVC_COUNT(c, bad_headers, 1);
	svc_refuse(c, r, RPCRDMA1_ERR_CHUNK);
}

void svc_conn_wc(struct svc_conn *c, const struct rpcrdma_wc *wc, struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_svc *s = c->svc;
	uint32_t kind = (uint32_t)(wc->wr_id >> 24) & 0xff;
	uint32_t idx = (uint32_t)wc->wr_id & 0xffffff;
	bool ok = wc->status == RPCRDMA_WC_SUCCESS;

	if (!ok && wc->status != RPCRDMA_WC_WR_FLUSH_ERR) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer, "completion error (status %d)",
			  (int)wc->status);
		s->st.conn_errors++;
		svc_conn_fail(c);
	}
	switch (kind) {
	case SVC_WR_RECV:
		c->rr_inv = (wc->wc_flags & RPCRDMA_WC_F_WITH_INV) ? wc->invalidated_stag : 0;
		if (s->srq && idx < s->srq_posted) {
			if (ok)
				handle_call(c, idx, wc->byte_len, runnow);
			else
				svc_srq_repost(s, idx); /* flushed: the pool's again */
		} else if (ok && idx < c->nrecv) {
			handle_call(c, idx, wc->byte_len, runnow);
		}
		break;
	case SVC_WR_SEND:
		send_done(c, idx);
		svc_done_wake(s);
		if (c->rdq_head)
			svc_reads_post(c); /* the send queue has room again */
		break;
	case SVC_WR_READ:
		svc_pull_read_done(c, idx, ok, runnow);
		break;
	case SVC_WR_WRITE:
		if (svc_req_of(c, idx) && c->reqs[idx]->writes_pending)
			c->reqs[idx]->writes_pending--;
		svc_done_wake(s);
		if (c->rdq_head)
			svc_reads_post(c); /* the send queue has room again */
		break;
	default:
		break;
	}
}

/* Reap @c's CQ (the shared one: every connection's); returns how many. A
 * short batch means the CQ is empty (no extra empty poll). */
int svc_conn_poll(struct svc_conn *c, struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_wc wc[32];
	int n, total = 0;

	do {
		n = xprt_cq_poll(c->cq, wc, 32);
		for (int i = 0; i < n; i++)
			svc_conn_wc(svc_wc_conn(&wc[i]), &wc[i], runnow);
		if (n > 0)
			total += n;
	} while (n == 32);
	return total;
}

/* ------------------------------------------------------------------ */
/* Connections (progress thread)                                       */
/* ------------------------------------------------------------------ */

/* A completion of an endpoint being destroyed: a shared receive it had
 * taken goes back to the queue (the buffer is the server's). */
static void srq_reclaim(struct rpcrdma_svc *s, const struct rpcrdma_wc *wc)
{
	uint32_t idx = (uint32_t)wc->wr_id & 0xffffff;

	if (s->srq && (uint32_t)(wc->wr_id >> 24) == SVC_WR_RECV && idx < s->srq_posted)
		svc_srq_repost(s, idx);
}

/* Destroying @c's endpoint flushed what it still had posted into the
 * shared CQ: those completions go (their endpoint is gone), the other
 * connections' are handled as usual. */
static void shared_cq_purge(struct svc_conn *c)
{
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma_wc wc[32];
	int n;

	do {
		n = rpcrdma_cq_poll(s->scq, wc, 32);
		for (int i = 0; i < n; i++)
			if (wc[i].ep != c->ep)
				svc_conn_wc(svc_wc_conn(&wc[i]), &wc[i], &s->runnow);
			else
				srq_reclaim(s, &wc[i]);
	} while (n == 32);
	s->scq_need -= c->cqe;
}

static void conn_destroy(struct svc_conn *c)
{
	struct rpcrdma_wc wc[32];

	if (c->ep)
		rpcrdma_ep_destroy(c->ep);
	if (c->cq && c->cq == c->svc->scq) {
		shared_cq_purge(c);
	} else if (c->cq) {
		int n;

		while ((n = rpcrdma_cq_poll(c->cq, wc, 32)) > 0)
			for (int i = 0; i < n; i++)
				srq_reclaim(c->svc, &wc[i]);
		rpcrdma_cq_destroy(c->cq);
	}
	if (c->tx_held) {
		struct svc_conn **pp = &c->svc->held_conns;

		while (*pp != c)
			pp = &(*pp)->held_next;
		*pp = c->held_next;
	}
	if (c->bc)
		bc_svc_conn_free(c->bc);
	svc_rr_conn_free(c);
	if (c->reqs) {
		for (uint32_t i = 0; i < c->nrecv; i++) {
			struct rpcrdma_svc_req *r = c->reqs[i];

			if (!r)
				continue;
			for (uint32_t k = 0; k < RPCRDMA_MAX_WRITE_CHUNKS; k++)
				if (r->wmr[k])
					rpcrdma_mr_dereg(r->wmr[k]);
			if (r->rdmr)
				rpcrdma_mr_dereg(r->rdmr);
			if (r->lmr)
				rpcrdma_mr_dereg(r->lmr);
			if (r->pull_need)
				svc_pull_release(c->svc, r);
			xprt_lbuf_fini(&r->lrep);
			free(r);
		}
		free(c->reqs);
	}
	svc_srq_conn_del(c->svc, c);
	xprt_pool_fini(&c->recvp);
	xprt_pool_fini(&c->sendp);
	free(c->sfree);
	free(c->sinfl);
	free(c);
}

/* @c's CQ: a share of @cqe entries in the shared CQ (grown to the sum of
 * the shares: RPCRDMA_WC overruns are fatal), or a CQ of its own. */
static int conn_cq(struct rpcrdma_svc *s, struct svc_conn *c, uint32_t cqe)
{
	struct rpcrdma_cq_attr ca = {.cqe = cqe};
	int rc;

	if (!s->scq)
		return rpcrdma_cq_create(s->dev, &ca, &c->cq);
	if (s->scq_need + cqe > s->scq_cap) {
		rc = rpcrdma_cq_resize(s->scq, s->scq_need + cqe);
		if (rc)
			return rc;
		s->scq_cap = s->scq_need + cqe;
	}
	s->scq_need += cqe;
	c->cqe = cqe;
	c->cq = s->scq;
	return 0;
}

static void conn_accept(struct rpcrdma_svc *s, struct rpcrdma_event *ev)
{
	struct svc_conn *c;
	struct rpcrdma_ep_attr ea = {0};
	uint8_t pdata[RPCRDMA1_CM_SIZE];
	uint32_t nsend = s->credits + SVC_SEND_EXTRA;
	int rc;

	if (s->stopping || s->nconns >= s->max_conns) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &ev->peer, "connection rejected: %s",
			  s->stopping ? "server stopping" : "max_conns reached");
		rpcrdma_reject(ev->req, NULL, 0);
		return;
	}
	if (!s->srq_tried)
		svc_srq_init(s);
	c = calloc(1, sizeof(*c));
	if (!c) {
		rpcrdma_reject(ev->req, NULL, 0);
		return;
	}
	c->svc = s;
	c->peer = ev->peer;
	c->cst.id = ++s->conn_ids;
	c->nrecv = s->credits + bc_svc_extra_recvs(s->bc) + svc_rr_extra_recvs(s);
	/* RFC 8797: the client's sizes bound ours; absent or bad -> 1024.
	 * Accepting without private data of ours, the client assumes 1024
	 * each way whatever it sent (RFC 8797 §4.1): so do we. */
	xprt_negotiate(s->pdata ? ev->private_data : NULL, s->pdata ? ev->private_data_len : 0,
		       s->inline_send, s->inline_recv, s->remote_inv, &c->lim);
	ea.comp_mask = RPCRDMA_EP_ATTR_CAPS | RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_CONTEXT |
		       RPCRDMA_EP_ATTR_IRD_ORD;
	/* RFC 6581 §9: we issue the Reads (ORD); we serve Reads only for a
	 * backchannel client (IRD), as Linux svcrdma answers IRD 0. */
	ea.ord = SVC_ORD;
	ea.ird = s->bc || s->rr ? SVC_BC_IRD : 0; /* and for exposed replies */
	ea.max_send_wr = 4 * s->credits + 256;
	ea.max_recv_wr = c->nrecv;
	ea.max_send_sge = 1;
	ea.max_recv_sge = 1;
	ea.mpa_crc = s->mpa_crc;
	ea.context = c;
	if (s->srq) {
		ea.comp_mask |= RPCRDMA_EP_ATTR_SRQ;
		ea.srq = s->srq;
	}
	/* at most nrecv receive completions wait, shared queue or not */
	rc = conn_cq(s, c, ea.max_send_wr + c->nrecv + 16);
	ea.send_cq = c->cq;
	ea.recv_cq = c->cq;
	ea.evch = s->evch;
	if (!rc)
		rc = rpcrdma_ep_create(s->pd, &ea, &c->ep);
	/* Buffers of the thresholds agreed (RFC 8797: a peer that sent no
	 * private data gets 1024 each way, not the 4096 we advertise), not
	 * ours: registered memory counts against the memlock limit (siw and
	 * rxe pin it). Version Two may raise the thresholds later up to ours
	 * (transport properties, svc_vers.c): a Version Two server keeps its
	 * own sizes. */
	if (!rc && !s->srq)
		rc = xprt_pool_init(&c->recvp, s->pd, c->nrecv,
				    s->v2 ? s->inline_recv : c->lim.inline_recv);
	if (!rc)
		rc = svc_srq_conn_add(s, c);
	if (!rc)
		rc = xprt_pool_init(&c->sendp, s->pd, nsend,
				    s->v2 ? s->inline_send : c->lim.inline_send);
	if (!rc) {
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): a table of pointers */
		c->reqs = calloc(c->nrecv, sizeof(*c->reqs));
		c->sfree = calloc(nsend, sizeof(*c->sfree));
		c->sinfl = calloc(nsend, sizeof(*c->sinfl));
		if (!c->reqs || !c->sfree || !c->sinfl)
			rc = -ENOMEM;
	}
	for (uint32_t i = 0; !rc && i < nsend; i++)
		c->sfree[c->nsfree++] = i;
	for (uint32_t i = 0; !rc && !s->srq && i < c->nrecv; i++)
		rc = xprt_pool_post_recv(&c->recvp, c->ep, i, svc_wrid(SVC_WR_RECV, i));
	if (!rc)
		rc = xprt_pdata_build(pdata, sizeof(pdata), s->inline_send, s->inline_recv,
				      s->remote_inv);
	if (rc) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &ev->peer, "connection rejected: %s",
			  rlog_errname(rc));
		rpcrdma_reject(ev->req, NULL, 0);
		conn_destroy(c);
		return;
	}
	rc = rpcrdma_accept(ev->req, c->ep, s->pdata ? pdata : NULL, s->pdata ? sizeof(pdata) : 0);
	if (rc) {
		RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &ev->peer, "accept failed: %s", rlog_errname(rc));
		conn_destroy(c);
		return;
	}
	RLOG_PEER(RPCRDMA_LOG_INFO, "svc", &ev->peer,
		  "accepted: MPA rev %u, CRC %s, peer IRD %u ORD %u, private data %u bytes, "
		  "inline send %u recv %u, remote invalidation %s, credits granted %u%s",
		  ev->mpa_rev, ev->crc || s->mpa_crc ? "on" : "off", ev->ird, ev->ord,
		  ev->private_data_len, c->lim.inline_send, c->lim.inline_recv,
		  c->lim.remote_inv ? "on" : "off", s->srq ? c->grant : s->credits,
		  s->srq ? " (shared receive queue: raised by the replies)" : "");
	if (s->bc)
		c->bc = bc_svc_conn_new(s->bc, c->ep, &c->lim); /* NULL: no backchannel */
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
	RPCRDMA_PROBE(conn_up, RPCRDMA_PROBE_SERVER, s->nconns, c->lim.inline_send,
		      c->lim.inline_recv, (uint32_t)c->lim.remote_inv);
}

/* The connection of an event's endpoint: the endpoint's context (set at
 * accept). An event never outlives its endpoint (rpcrdma_ep_destroy()
 * drops the ones not read, in both providers), so the context is a live
 * connection of ours; the check guards against a provider that breaks
 * that. O(1): a server with 10,000 connections used to walk them all for
 * every connection event (issue 20). */
static struct svc_conn *conn_of(const struct rpcrdma_event *ev)
{
	struct svc_conn *c = ev->context;

	return c && c->ep == ev->ep ? c : NULL;
}

void svc_conn_reap(struct rpcrdma_svc *s)
{
	struct svc_conn **pp = &s->conns;
	uint32_t freed = s->freed_since_trim;

	while (*pp) {
		struct svc_conn *c = *pp;

		if (c->dead && c->held == 0 && c->nsfree == s->credits + SVC_SEND_EXTRA) {
			*pp = c->next;
			s->nconns--;
			conn_destroy(c);
			s->freed_since_trim++;
			continue;
		}
		pp = &c->next;
	}
	svc_mem_trim(s, freed);
}

/* Connection events: accept, established, disconnected (lock held). */
void svc_conn_events(struct rpcrdma_svc *s, struct rpcrdma_svc_req **runnow)
{
	struct rpcrdma_event ev;

	while (rpcrdma_evch_get(s->evch, &ev) == 0) {
		struct svc_conn *c;

		switch (ev.type) {
		case RPCRDMA_EV_CONNECT_REQUEST:
			conn_accept(s, &ev);
			break;
		case RPCRDMA_EV_ESTABLISHED:
			c = conn_of(&ev);
			if (c && !c->up) {
				c->up = true;
				s->st.connections++;
				RLOG_PEER(RPCRDMA_LOG_INFO, "svc", &c->peer, "connected");
			}
			break;
		case RPCRDMA_EV_DISCONNECTED:
			c = conn_of(&ev);
			if (c && !c->dead) {
				svc_conn_poll(c, runnow);
				c->dead = true;
				send_drain(c);
				svc_pull_drop_conn(s, c);
				if (c->bc)
					bc_svc_conn_down(c->bc); /* RFC 8167 §5.4 */
				if (c->up)
					s->st.connections--;
				RPCRDMA_PROBE(conn_down, RPCRDMA_PROBE_SERVER, s->st.connections,
					      c->held);
				RLOG_PEER(RPCRDMA_LOG_INFO, "svc", &c->peer, "disconnected");
				c->up = false;
				/* Flushed Reads end their requests;
				 * the rest end as they are answered. */
				svc_done_wake(s);
			}
			break;
		case RPCRDMA_EV_TERMINATE:
			c = conn_of(&ev);
			if (c) {
				s->st.conn_errors++;
				RLOG_PEER(RPCRDMA_LOG_ERR, "svc", &c->peer,
					  "Terminate %s: layer %u type %u code %u",
					  ev.term_local ? "sent" : "received", ev.term_layer,
					  ev.term_etype, ev.term_code);
			}
			break;
		default:
			break;
		}
	}
}

/* Bytes every connection moved so far (both directions). */
uint64_t svc_conn_bytes(struct rpcrdma_svc *s)
{
	struct rpcrdma_ep_stats st;
	uint64_t b = 0;

	futex_mutex_lock(&s->lock);
	for (struct svc_conn *c = s->conns; c; c = c->next)
		if (!rpcrdma_ep_query_stats(c->ep, &st))
			b += st.tx_bytes + st.rx_bytes;
	futex_mutex_unlock(&s->lock);
	return b;
}

/* ------------------------------------------------------------------ */
/* The listener and teardown                                          */
/* ------------------------------------------------------------------ */

/* @host and @port as a socket address; NULL or "" is the dual-stack
 * wildcard "::" (IPv4 clients arrive v4-mapped, softiwarp/cm.c), or
 * 0.0.0.0 when @v4 (a host without IPv6). */
static int listen_addr(const char *host, uint16_t port, bool v4, struct sockaddr_storage *ss,
		       socklen_t *sl)
{
	struct addrinfo hints = {0}, *res = NULL;
	char ps[8];

	memset(ss, 0, sizeof(*ss));
	if ((!host || !*host) && v4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons(port);
		*sl = sizeof(*sin);
		return 0;
	}
	if (!host || !*host) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons(port);
		*sl = sizeof(*sin6);
		return 0;
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(host, ps, &hints, &res) || !res)
		return -ENOENT;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* The CQ every connection shares, when the provider can resize one. */
static int shared_cq_create(struct rpcrdma_svc *s)
{
	struct rpcrdma_cq_attr ca = {.cqe = 1};
	int rc = rpcrdma_cq_create(s->dev, &ca, &s->scq);

	if (rc)
		return rc;
	rc = rpcrdma_cq_resize(s->scq, 1);
	if (rc) {
		rpcrdma_cq_destroy(s->scq);
		s->scq = NULL; /* a CQ per connection (conn_cq) */
	}
	s->scq_cap = 1;
	return 0;
}

int svc_listen(struct rpcrdma_svc *s, const char *host, uint16_t port, const char *provider)
{
	struct sockaddr_storage ss = {0}, la;
	socklen_t sl = 0;
	int rc;

	rc = listen_addr(host, port, false, &ss, &sl);
	if (!rc)
		rc = rpcrdma_dev_open(provider, NULL, &s->dev);
	if (!rc)
		rc = rpcrdma_pd_alloc(s->dev, &s->pd);
	if (!rc)
		s->remote_inv = s->remote_inv && xprt_dev_remote_inv(s->dev);
	if (!rc)
		rc = rpcrdma_evch_create(s->dev, NULL, &s->evch);
	if (!rc)
		rc = shared_cq_create(s);
	if (!rc)
		rc = rpcrdma_listen(s->dev, s->evch, (struct sockaddr *)&ss, sl, s->backlog, s,
				    &s->lst);
	if (rc == -EAFNOSUPPORT && (!host || !*host)) {
		/* no IPv6 on this host (or in this provider): IPv4 only */
		rc = listen_addr(host, port, true, &ss, &sl);
		if (!rc)
			rc = rpcrdma_listen(s->dev, s->evch, (struct sockaddr *)&ss, sl, s->backlog,
					    s, &s->lst);
	}
	if (!rc)
		rc = rpcrdma_listener_addr(s->lst, &la);
	if (!rc)
		s->port = ntohs(la.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&la)->sin6_port
							 : ((struct sockaddr_in *)&la)->sin_port);
	return rc;
}

void svc_teardown(struct rpcrdma_svc *s)
{
	while (s->conns) {
		struct svc_conn *c = s->conns;

		s->conns = c->next;
		conn_destroy(c);
	}
	bc_svc_free(s->bc);
	svc_srq_fini(s);
	if (s->scq)
		rpcrdma_cq_destroy(s->scq);
	if (s->lst)
		rpcrdma_listener_destroy(s->lst);
	if (s->evch)
		rpcrdma_evch_destroy(s->evch);
	if (s->pd)
		rpcrdma_pd_free(s->pd);
	if (s->dev)
		rpcrdma_dev_close(s->dev);
	svc_pull_fini(s);
	svc_rr_fini(s);
	svc_drc_free(s->drc);
	s->drc = NULL;
	free(s->wthr);
}

/* ---- the backchannel's view of a server (transport/backchannel_hooks.h) ---- */

void svc_bc_host(struct rpcrdma_svc *s, struct svc_bc_host *h)
{
	h->lock = &s->lock;
	h->pd = s->pd;
	h->inline_send = s->inline_send;
	h->started = s->started;
}

int svc_bc_attach(struct rpcrdma_svc *s, struct bc_svc *b)
{
	int rc = 0;

	futex_mutex_lock(&s->lock);
	if (s->started)
		rc = -EBUSY;
	else if (s->bc)
		rc = -EEXIST;
	else
		s->bc = b;
	futex_mutex_unlock(&s->lock);
	return rc;
}

struct bc_svc *svc_bc_get(struct rpcrdma_svc *s)
{
	return s->bc;
}

struct bc_conn *svc_req_bc(struct rpcrdma_svc_req *r)
{
	return r->conn->bc;
}
