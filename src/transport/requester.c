// SPDX-License-Identifier: MIT
/*
 * The forward requester (transport/requester.h): call slots, the XID
 * space, the transmit queue, transmission, reply matching, completion of
 * calls and of their callbacks, and deadlines.
 *
 * Credits (RFC 8166 §3.3.1): a call is "on the wire" from its Send until
 * its reply; xprt_credits (credits.c) bounds that count by the latest
 * grant, starting at one on every connection. Calls that cannot go yet
 * wait in the transmit queue (need_tx) and go in FIFO order as replies
 * return.
 *
 * XIDs: the low XID_SLOT_BITS bits of a call's XID are its slot index, the
 * rest a per-client sequence (seeded per process), so a reply finds its
 * slot in O(1) (slot_by_xid); the full XID is still compared, in the
 * transport header and in the RPC reply (reply_rpc_check).
 *
 * Deadlines: every call ends by its deadline whatever the peer does. A
 * caller waiting for a free slot waits until its deadline at most; a
 * reconnect ends at the earliest deadline of the calls waiting for it
 * (reconnect.c); a call that times out on the wire keeps its slot and
 * credit (the responder may still answer, RFC 8166 §3.3.1) until its
 * reply or the connection goes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "transport/backchannel_hooks.h"
#include "transport/requester.h"
#include "util/be.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/probe.h"

static void txq_push(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	s->need_tx = true;
	s->qnext = NULL;
	if (c->txq_tail)
		c->txq_tail->qnext = s;
	else
		c->txq_head = s;
	c->txq_tail = s;
}

static void txq_remove(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	struct clnt_slot **pp = &c->txq_head, *prev = NULL;

	if (!s->need_tx)
		return;
	while (*pp && *pp != s) {
		prev = *pp;
		pp = &(*pp)->qnext;
	}
	if (*pp) {
		*pp = s->qnext;
		if (c->txq_tail == s)
			c->txq_tail = prev;
	}
	s->need_tx = false;
	s->qnext = NULL;
}

void clnt_slot_complete(struct rpcrdma_clnt *c, struct clnt_slot *s, int status,
			struct cb_list *cbl)
{
	/* RFC 8166 §3.4.? fencing: no chunk memory stays exposed once the
	 * caller may reuse it. */
	if (s->call.mr_used)
		c->st.local_invalidations += xprt_call_fence(&s->call, false, 0);
	txq_remove(c, s);
	s->status = status;
	s->done = true;
	if (status == -ETIMEDOUT)
		c->st.timeouts++;
	if (status == -ETIMEDOUT && c->state != C_UP && c->last_conn_err) {
		/* Timed out waiting for a connection: say why it is not up. */
		s->result.conn_error = c->last_conn_err;
		RLOG_PEER(RPCRDMA_LOG_ERR, "clnt", &c->addr,
			  "call xid %#x timed out: connection not re-established after %u "
			  "attempts, last error %s",
			  s->call.xid, c->attempts, rlog_errname(c->last_conn_err));
	}
	xprt_slot_final(&s->call, &s->result, status);
	if (s->async) {
		c->nasync--;
		if (cbl && cbl->n < CB_MAX) {
			cbl->e[cbl->n].cb = s->cb;
			cbl->e[cbl->n].arg = s->cb_arg;
			cbl->e[cbl->n].res = s->call.res;
			cbl->e[cbl->n].status = status;
			cbl->n++;
		} else if (s->cb) {
			/* Callback list full: run it here (rare; the lock is
			 * dropped around it). */
			futex_mutex_unlock(&c->lock);
			s->cb(c, status, s->call.res, s->cb_arg);
			futex_mutex_lock(&c->lock);
		}
		clnt_slot_release(c, s);
	} else if (s->waiting) {
		/* Its caller sleeps (another thread leads): wake it. */
		futex_cond_signal(&s->cv);
	}
}

void clnt_run_callbacks(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	for (uint32_t i = 0; i < cbl->n; i++)
		if (cbl->e[i].cb)
			cbl->e[i].cb(c, cbl->e[i].status, cbl->e[i].res, cbl->e[i].arg);
	cbl->n = 0;
}

/* ---- transmission ---- */

static int transmit(struct rpcrdma_clnt *c, struct clnt_slot *s, uint32_t more, bool *recv_failed)
{
	struct xprt_call *k = &s->call;
	struct rpcrdma_send_wr wr;
	int rc;

	if (k->mr_used)
		c->st.local_invalidations += xprt_call_fence(k, false, 0);
	rc = xprt_marshal(k, &c->lim, c->ddp_threshold, c->nslots);
	if (rc)
		return rc;
	RPCRDMA_PROBE(call_marshal, k->xid, k->call_proc, k->nread, k->nwrite, k->reply_offered,
		      k->hdr_len, k->msg_len);
#ifdef RPCRDMA_TEST_HOOKS
	if (c->hook.on_send)
		c->hook.on_send(c->hook.arg, k->hdr, k->hdr_len, k->msg_len);
#endif
	/* Unsignaled: the send buffers belong to the slot, which is not
	 * reused before the reply arrives, and a reply implies the Send was
	 * delivered. Errors still complete (and flush) it. */
	wr.wr_id = clnt_wrid(c->gen, CLNT_WR_SEND, s->index);
	wr.opcode = RPCRDMA_WR_SEND;
	wr.flags = more; /* RPCRDMA_SEND_DEFER: another call follows at once */
	wr.sg = k->sge;
	wr.num_sge = k->nsge;
	wr.invalidate_stag = 0;
	wr.remote_offset = 0;
	wr.remote_stag = 0;
	if (c->nrpend) {
		/* the receives replies used go first, in the same step */
		unsigned int np = 0;

		rc = xprt_post_send_recv(c->ep, &wr, c->rpend, c->nrpend, &np);
		if (np < c->nrpend) {
			c->nrpend = 0;
			*recv_failed = true;
			return rc ? rc : -EIO;
		}
		c->nrpend = 0;
	} else {
		rc = xprt_post_send(c->ep, &wr);
	}
	if (rc)
		return rc;
	s->on_wire = true;
	s->rr_epoch = c->rr_epoch; /* after the notifications sent so far */
	if (xprt_slot_sent(&s->result, k)) {
		c->st.retransmits++;
		RLOG_PEER(RPCRDMA_LOG_DEBUG, "clnt", &c->addr, "retransmitted xid %#x",
			  s->call.xid);
	}
	XPRT_COUNT_SENT(c->st, &c->cr, k);
	c->st.write_chunks += k->nwrite;
	c->st.reg_bytes += k->reg_bytes;
	return 0;
}

/* Send waiting calls, oldest first, while the credit window allows. All
 * but the last are posted with RPCRDMA_SEND_DEFER, so calls queued together
 * (by completion callbacks that issue new calls, or after a credit grant)
 * leave in one transmit; the last post rings the doorbell. */
enum tx_res { TX_SENT, TX_FAILED, TX_LOST };

/* Send @s, which is not (or no longer) in the transmit queue. TX_FAILED:
 * the call failed and is completed; TX_LOST: the connection is lost and
 * the call waits at the head of the queue for the next one. */
static enum tx_res tx_one(struct rpcrdma_clnt *c, struct clnt_slot *s, uint32_t more,
			  struct cb_list *cbl)
{
	bool recv_failed = false;
	int rc = transmit(c, s, more, &recv_failed);

	if (recv_failed) {
		/* As a failed re-post in handle_wc: the connection is lost;
		 * the call, not sent, goes first on the next. */
		clnt_txq_push_front(c, s);
		clnt_conn_lost(c, cbl);
		return TX_LOST;
	}
	if (rc) {
		clnt_slot_complete(c, s, rc, cbl);
		return TX_FAILED;
	}
	return TX_SENT;
}

void clnt_kick_tx(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	bool held = false;

	while (c->state == C_UP && c->txq_head && xprt_credits_may_send(&c->cr)) {
		struct clnt_slot *s = c->txq_head;
		/* another one goes right after this one */
		bool more = s->qnext && c->cr.on_wire + 1u < c->cr.grant;

		c->txq_head = s->qnext;
		if (!c->txq_head)
			c->txq_tail = NULL;
		s->need_tx = false;
		s->qnext = NULL;
		enum tx_res r = tx_one(c, s, more ? RPCRDMA_SEND_DEFER : 0u, cbl);

		if (r == TX_LOST)
			break;
		if (r == TX_SENT)
			held = more;
	}
	if (held && c->ep)
		(void)rpcrdma_ep_flush(c->ep);
}

/* ---- deadlines ---- */

/* Lock held: the earliest deadline of the calls not completed yet (0:
 * none has one). */
static uint64_t earliest_deadline(const struct rpcrdma_clnt *c)
{
	uint64_t d = 0;

	for (uint32_t i = 0; i < c->nslots; i++) {
		const struct clnt_slot *s = &c->slots[i];

		if (s->in_use && !s->done && !s->zombie && s->deadline && (!d || s->deadline < d))
			d = s->deadline;
	}
	return d;
}

/* Lock not held: has a call that is not completed reached its deadline?
 * (Connecting stops then: check_timeouts fails that call.) */
bool clnt_deadline_passed(struct rpcrdma_clnt *c, uint64_t now)
{
	uint64_t d;

	futex_mutex_lock(&c->lock);
	d = earliest_deadline(c);
	futex_mutex_unlock(&c->lock);
	return d && now >= d;
}

/* ---- receive: reply matching ---- */

static struct clnt_slot *slot_by_xid(struct rpcrdma_clnt *c, uint32_t xid)
{
	uint32_t idx = xid & XID_SLOT_MASK;
	struct clnt_slot *s;

	if (idx >= c->nslots)
		return NULL;
	s = &c->slots[idx];
	if (!s->in_use || !s->on_wire || s->call.xid != xid)
		return NULL;
	return s;
}

/* RFC 8166 §4.2.1: a reply's rdma_xid repeats the XID of its RPC message,
 * which is the call's (RFC 5531 §9), and that message is a REPLY. The
 * message is inline after the header (RDMA_MSG) or in the call's Reply
 * chunk (RDMA_NOMSG); an RDMA_ERROR carries none. 0: nothing against it
 * (what the decoder objects to completes the call with its error); 1: a
 * different RPC XID; 2: a CALL. */
static int reply_rpc_check(const struct clnt_slot *s, const uint8_t *buf, uint32_t len,
			   const struct rpcrdma1_hdr *h, uint32_t vers)
{
	const uint8_t *msg;
	uint64_t mlen;

	if (h->vers != vers)
		return 0;
	if (h->proc == RPCRDMA1_MSG) {
		if (h->hdr_len > len)
			return 0;
		msg = buf + h->hdr_len;
		mlen = len - h->hdr_len;
	} else if (h->proc == RPCRDMA1_NOMSG) {
		if (!s->call.reply_offered || rpcrdma1_reply_chunk_length(&h->chunks, &mlen) ||
		    mlen > s->call.reply_cap)
			return 0;
		msg = s->call.lreply.buf;
	} else {
		return 0;
	}
	if (mlen < 8)
		return 0;
	if (get_be32(msg + 4) == 0) /* msg_type CALL */
		return 2;
	return get_be32(msg) != s->call.xid ? 1 : 0;
}

/* RFC 8167 §4.1 with reliable replies: an RDMA_NOMSG whose Read list
 * starts at position zero is a reverse Long Call or a forward reply in a
 * responder-provided Read chunk; only the message tells, once pulled. One
 * whose XID is that of a forward call on the wire is pulled as its reply
 * (rr_pull.c hands it to the backchannel should it be a CALL); any other
 * goes to the backchannel. Version One only: Version Two says its
 * direction. */
static bool rr_fwd_reply(struct rpcrdma_clnt *c, const uint8_t *buf, uint32_t len)
{
	if (len < 24)
		return false;
	return get_be32(buf + 4) == RPCRDMA1_VERSION && get_be32(buf + 12) == RPCRDMA1_NOMSG &&
	       get_be32(buf + 16) == 1 && get_be32(buf + 20) == 0 && slot_by_xid(c, get_be32(buf));
}

/* The statistics of a decoded reply @h whose processing returned @st. */
static inline void reply_count(struct rpcrdma_clnt *c, const struct rpcrdma1_hdr *h, int st)
{
	if (h->proc == RPCRDMA1_ERROR) {
		RPCRDMA_PROBE(error_recv, RPCRDMA_PROBE_CLIENT, h->xid, h->err, h->vers);
		RLOG_PEER(RPCRDMA_LOG_ERR, "clnt", &c->addr, "RDMA_ERROR %s received for xid %#x",
			  h->err == RPCRDMA1_ERR_VERS ? "ERR_VERS" : "ERR_CHUNK", h->xid);
		if (h->err == RPCRDMA1_ERR_VERS)
			c->st.err_vers_rx++;
		else
			c->st.err_chunk_rx++;
		return;
	}
	if (h->proc == RPCRDMA1_NOMSG)
		c->st.long_replies++;
	for (uint32_t i = 0; i < h->chunks.nwrites; i++) {
		uint64_t w;

		if (!rpcrdma1_write_chunk_length(&h->chunks, i, &w))
			c->st.write_bytes += w;
	}
	if (h->chunks.reply_present) {
		uint64_t w;

		if (!rpcrdma1_reply_chunk_length(&h->chunks, &w))
			c->st.reply_bytes += w;
	}
	if (st == -EBADMSG)
		c->st.decode_errors++;
	else if (st)
		c->st.rpc_errors++;
}

/* The status a reply @h to @s ends its call with: the decoder's error
 * @rc, the Short reply's SUCCESS (@short_ok), else its processing. */
static inline int reply_status(struct rpcrdma_clnt *c, struct clnt_slot *s, const uint8_t *buf,
			       uint32_t len, int rc, bool short_ok)
{
	int st;

	if (rc) {
		c->st.bad_headers++;
		return rc == -EPROTONOSUPPORT ? -EPROTONOSUPPORT : -EBADMSG;
	}
	if (short_ok) {
		s->result.reply_proc = RPCRDMA1_MSG;
		s->result.reply_stat = RPCRDMA_RPC_MSG_ACCEPTED;
		s->result.accept_stat = RPCRDMA_RPC_SUCCESS;
		return 0;
	}
	st = xprt_reply_process(&s->call, buf, len, &c->rh, &s->result);
	reply_count(c, &c->rh, st);
	return st;
}

/* A received message that is not a reverse call. True when it ended a call
 * on the wire (its receive is given back with the next call, see rpend);
 * false when it was dropped (a reply to no call on the wire, a duplicate,
 * a late one after the connection's call is gone, a wrong RPC XID, a CALL):
 * the caller re-posts that receive at once, so the calls on the wire keep
 * one posted receive each. */
__attribute__((always_inline)) static inline bool
handle_reply(struct rpcrdma_clnt *c, uint32_t idx, const struct rpcrdma_wc *wc, struct cb_list *cbl)
{
	const uint8_t *buf = xprt_pool_buf(&c->recvp, idx);
	struct rpcrdma1_hdr *h = &c->rh;
	struct clnt_slot *s;
	uint32_t len = wc->byte_len;
	bool short_hdr, short_ok = false;
	int rc, st;

#ifdef RPCRDMA_TEST_HOOKS
	if (c->hook.on_recv)
		c->hook.on_recv(c->hook.arg, buf, len);
#endif
	/* RFC 8167 §4.1: a reverse Call (msg_type CALL) lands in any receive
	 * buffer; the backchannel copies it out, the buffer is re-posted. */
	if (c->bc && !rr_fwd_reply(c, buf, len) && bc_clnt_recv(c->bc, buf, len))
		return true; /* re-posted at once (handle_wc: c->bc) */
	c->st.inline_bytes_rx += len;
	if (len < RPCRDMA1_FIXED_SIZE) {
		c->st.bad_headers++;
		return false;
	}
	/* The common Short reply word by word (short.c), else in full. */
	short_hdr = xprt_short_decode_hdr(buf, len, h);
	rc = short_hdr ? 0 : rpcrdma1_decode_buf(buf, len, h);
	if (__builtin_expect(rc == -EPROTONOSUPPORT, 0) && c->lim.vers == RPCRDMA2_VERSION) {
		rc = clnt_v2_decode(c, buf, len, h); /* Version Two (clnt_vers.c) */
		if (rc > 0)
			return rc == 1;
	}
	s = slot_by_xid(c, h->xid);
	if (!s) {
		/* The draft: a reply in a Read chunk is notified even for an
		 * XID we do not know. */
		if (!rc && clnt_rr_reply(c, h))
			(void)clnt_rr_notify_hdr(c, h, false);
		/* Not fatal: count and drop. */
		c->st.unmatched_replies++;
		return false;
	}
	if (!rc) {
		/* RDMA_MSG without chunks carrying this call's accepted
		 * SUCCESS and no results to decode: what reply_rpc_check(),
		 * xprt_reply_process() and reply_count() would conclude. */
		short_ok =
		    short_hdr && !s->call.xres &&
		    xprt_short_reply_ok(buf + XPRT_SHORT_HDR, len - XPRT_SHORT_HDR, s->call.xid);
		int bad = short_ok ? 0 : reply_rpc_check(s, buf, len, h, c->lim.vers);

		if (bad) {
			/* Not this call's reply: it stays on the wire. */
			if (bad == 2)
				c->st.unexpected_calls++;
			else
				c->st.xid_mismatches++;
			return false;
		}
	}
	/* RFC 8166 §3.3.1; with a backchannel, RFC 8167 §4.1: an RDMA_ERROR's
	 * direction cannot be told from the message, its credit is ignored. */
	if (__builtin_expect(h->vers != c->rx_vers, 0)) {
		/* Negotiating, or a reply in another version (clnt_vers.c) */
		if (clnt_v2_reply_vers(c, s, h, &rc))
			return true; /* ERR_VERS: the call goes again in Version One */
	} else if (!(c->bc && (h->proc == RPCRDMA1_ERROR || (!rc && clnt_rr_reply(c, h))))) {
		/* (with a backchannel, a reply in a Read chunk counts once
		 * pulled, rr_pull.c) */
		xprt_credits_update(&c->cr, h->credit);
		if (__builtin_expect(c->rr_held != 0, 0))
			clnt_rr_reply_seen(c, s);
	}
	if (RLOG_ON(RPCRDMA_LOG_INFO) && c->st.credits != c->cr.grant)
		rlog_emit_peer(RPCRDMA_LOG_INFO, "clnt", &c->addr, "credits granted %u (was %u)",
			       c->cr.grant, c->st.credits);
	c->st.credits = c->cr.grant;
	RPCRDMA_PROBE(credits, RPCRDMA_PROBE_FORWARD, c->cr.grant, c->cr.on_wire);
	bool held = false;

	if (__builtin_expect(!rc && clnt_rr_reply(c, h), 0) && h->vers == c->rx_vers) {
		/* In a responder-provided Read chunk (rr_pull.c): pulled for a
		 * call still waiting (with a backchannel, always: it may be a
		 * reverse call), else only notified, on the call's credit. */
		if (c->bc || (!s->zombie && !s->done))
			return clnt_rr_start(c, s, h, buf, len, cbl);
		held = clnt_rr_notify_hdr(c, h, true);
	}
	s->on_wire = false;
	if (!held)
		xprt_credits_done(&c->cr);
	c->st.outstanding = c->cr.on_wire;
	if (s->zombie) {
		/* (our transport properties answered with an RDMA2_ERROR:
		 * the defaults hold, clnt_vers.c) */
		if (h->xid != c->props_xid || !c->props_xid)
			c->st.unmatched_replies++;
		clnt_slot_free(c, s);
		return true;
	}
	if (s->done)
		return true;
	/* RFC 8797 §4 / RFC 8166 §3.4.?: the responder may have invalidated
	 * our one exposed STag; everything else is invalidated here, before
	 * the call completes. */
	if (wc->wc_flags & RPCRDMA_WC_F_WITH_INV) {
		c->st.remote_invalidations++;
		s->result.remote_invalidated = 1;
	}
	if (s->call.mr_used)
		c->st.local_invalidations += xprt_call_fence(
		    &s->call, wc->wc_flags & RPCRDMA_WC_F_WITH_INV, wc->invalidated_stag);
	st = reply_status(c, s, buf, len, rc, short_ok);
	c->st.replies++;
	RPCRDMA_PROBE(reply_recv, h->xid, h->proc, c->cr.grant, st);
	clnt_slot_complete(c, s, st, cbl);
	return true;
}

void clnt_handle_wc(struct rpcrdma_clnt *c, const struct rpcrdma_wc *wc, struct cb_list *cbl)
{
	uint32_t gen = (uint32_t)(wc->wr_id >> 32);
	uint32_t kind = (uint32_t)(wc->wr_id >> 24) & 0xff;
	uint32_t idx = (uint32_t)wc->wr_id & 0xffffff;

	if (gen != c->gen || c->state != C_UP)
		return; /* an old connection's completion */
	if (wc->status != RPCRDMA_WC_SUCCESS) {
		/* Any failed or flushed work of the current connection means
		 * it is gone (flushes happen only on an endpoint in error or
		 * disconnected). */
		clnt_conn_lost(c, cbl);
		return;
	}
	if (kind == BC_WR_KIND) {
		bc_clnt_wc(c->bc, wc); /* the backchannel's Sends and Reads */
		return;
	}
	if (kind == CLNT_WR_RR_READ || kind == CLNT_WR_RR_DONE) {
		clnt_rr_wc(c, wc, cbl); /* reliable replies' Reads and notifications */
		return;
	}
	if (kind != CLNT_WR_RECV || idx >= c->nrecv) {
		if (kind == CLNT_WR_V2_ANSWER)
			clnt_v2_answer_wc(c, idx); /* an RDMA2_ERROR we answered with */
		return;
	}
	bool ended = handle_reply(c, idx, wc, cbl);

	if (c->state != C_UP)
		return;
	if (ended && !c->bc && c->nrpend < c->nrecv) {
		/* posted with the next call (transmit; see rpend) */
		c->rpend[c->nrpend].wr_id = clnt_wrid(c->gen, CLNT_WR_RECV, idx);
		c->rpend_sge[c->nrpend].addr = (uint64_t)(uintptr_t)xprt_pool_buf(&c->recvp, idx);
		c->rpend_sge[c->nrpend].length = (uint32_t)c->recvp.size;
		c->rpend_sge[c->nrpend].lkey = c->recvp.lkey;
		c->nrpend++;
	} else if (xprt_pool_post_recv(&c->recvp, c->ep, idx,
				       clnt_wrid(c->gen, CLNT_WR_RECV, idx))) {
		clnt_conn_lost(c, cbl);
	}
}

void clnt_check_timeouts(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	uint64_t now = monotonic_ns();
	bool probe_lost = false;

	for (uint32_t i = 0; i < c->nslots; i++) {
		struct clnt_slot *s = &c->slots[i];

		if (s->in_use && !s->done && !s->zombie && xprt_deadline_passed(s->deadline, now)) {
			/* the Version Two probe, unanswered (clnt_vers.c) */
			probe_lost |= c->neg == CLNT_NEG_PROBE && s->on_wire;
			clnt_slot_complete(c, s, -ETIMEDOUT, cbl);
		}
	}
	if (probe_lost)
		clnt_v2_probe_lost(c, cbl);
}

/* ---- calls ---- */

/* Inline: an asynchronous call passes all of its arguments on (14 of them). */
__attribute__((always_inline)) static inline int
call_start(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xargs,
	   void *args, xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts,
	   rpcrdma_clnt_cb_t cb, void *cb_arg, bool async, struct clnt_slot **out,
	   struct cb_list *cbl)
{
	struct clnt_slot *s = NULL;
	uint32_t tmo = c->timeout_ms;

	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_RECV_BULK) &&
	    opts->nrecv_bulk > RPCRDMA_MAX_BULK)
		return -EMSGSIZE;
	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_RECV_BULK_V) &&
	    (opts->nrecv_bulk_v > RPCRDMA_MAX_WRITE_CHUNKS ||
	     (opts->nrecv_bulk_v && !opts->recv_bulk_v)))
		return opts->nrecv_bulk_v > RPCRDMA_MAX_WRITE_CHUNKS ? -EMSGSIZE : -EINVAL;
	uint64_t t0 = 0; /* when it started waiting for a slot */

	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_TIMEOUT))
		tmo = opts->timeout_ms;
	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_AUTH) &&
	    rpcrdma_rpc_check_cred_verf(opts->auth, opts->auth_len))
		return -EINVAL;
	while (!c->nfree) {
		/* Slots held by calls that timed out on the wire come back
		 * with their replies or the connection (credits_held_by_dead):
		 * the background thread drives the device meanwhile. */
		struct timespec ts;
		uint64_t now = monotonic_ns();

		if (c->stop)
			return -ECANCELED;
		if (!t0)
			t0 = now;
		if (tmo && now - t0 >= (uint64_t)tmo * 1000000ull) {
			c->st.timeouts++;
			return -ETIMEDOUT;
		}
		if (!c->nslot_wait++ && !c->leader)
			futex_cond_signal(&c->bg_cv);
		realtime_at(tmo ? t0 + (uint64_t)tmo * 1000000ull : now + 50000000ull, &ts);
		(void)futex_cond_timedwait(&c->slot_cv, &c->lock, &ts);
		c->nslot_wait--;
	}
	if (c->stop)
		return -ECANCELED;
	/* A client whose retries ran out once tries again for a new call. */
	if (c->state == C_DEAD)
		c->state = C_DOWN;
	for (uint32_t i = 0; i < c->nslots; i++) {
		if (!c->slots[i].in_use) {
			s = &c->slots[i];
			break;
		}
	}
	if (!s)
		return -EAGAIN; /* nfree said otherwise: cannot happen */
	c->nfree--;
	s->in_use = true;
	s->done = false;
	s->zombie = false;
	s->on_wire = false;
	s->waiting = false;
	s->async = async;
	s->cb = cb;
	s->cb_arg = cb_arg;
	s->status = 0;
	memset(&s->result, 0, sizeof(s->result));
	s->call.xid = xprt_xid_make(c->xid_seq++, s->index);
	xprt_slot_start(&s->call, prog, vers, proc, xargs, args, xres, res);
	if (opts)
		s->call.opts = *opts;
	else
		s->call.opts.comp_mask = 0;
	s->call.auth = c->auth_len ? c->auth : NULL;
	s->call.auth_len = c->auth_len;
	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_AUTH)) {
		s->call.auth = opts->auth;
		s->call.auth_len = opts->auth_len;
	}
	/* A call issued by a completion callback on the leader: the leader's
	 * clock of this pass is recent enough for a millisecond deadline. */
	bool from_cb = async && tl_cb_clnt == c;

	if (!t0)
		t0 = from_cb ? c->now_ns : monotonic_ns();
	s->deadline = xprt_deadline_at(t0, tmo);
	c->st.calls++;
	if (async)
		c->nasync++;
	*out = s;
	if (from_cb) {
		c->cb_issued++;
		if (!c->cb_last) {
			txq_push(c, s);
			c->cb_queued++; /* the last callback's call takes it along */
			return 0;
		}
		c->cb_queued = 0; /* all go now, this one last (kick_tx) */
	}
	if (!c->txq_head && c->state == C_UP && xprt_credits_may_send(&c->cr)) {
		/* nothing waits before it: what kick_tx would do, directly */
		if (tx_one(c, s, 0, cbl) == TX_LOST)
			c->st.credit_stalls++; /* waits for a connection */
		return 0;
	}
	txq_push(c, s);
	clnt_kick_tx(c, cbl);
	if (s->need_tx)
		c->st.credit_stalls++; /* waits for a credit or a connection */
	return 0;
}

/* A synchronous call: start it, wait for it (leading when no one does). */
__attribute__((always_inline)) static inline int
call_sync(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers, uint32_t proc, xdrproc_t xargs,
	  void *args, xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts)
{
	struct cb_list cbl;
	struct clnt_slot *s;
	int rc;

	cbl.n = 0;
	futex_mutex_lock(&c->lock);
	rc = call_start(c, prog, vers, proc, xargs, args, xres, res, opts, NULL, NULL, false, &s,
			&cbl);
	if (!rc) {
		clnt_wait_done(c, s);
		rc = s->status;
		clnt_slot_release(c, s);
	}
	futex_mutex_unlock(&c->lock);
	if (cbl.n)
		clnt_run_callbacks(c, &cbl);
	return rc;
}

int clnt_call_own(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
		  xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts)
{
	if (!c)
		return -EINVAL;
	return call_sync(c, c->prog, c->vers, proc, xargs, args, xres, res, opts);
}

/* As rpcrdma_clnt_call() to another program on the same connection. */
int clnt_call_prog(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers, uint32_t proc,
		   xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
		   const struct rpcrdma_call_opts *opts)
{
	return call_sync(c, prog, vers, proc, xargs, args, xres, res, opts);
}

int clnt_call_async(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
		    xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts,
		    rpcrdma_clnt_cb_t cb, void *cb_arg)
{
	struct cb_list cbl;
	struct clnt_slot *s;
	int rc;

	if (!c)
		return -EINVAL;
	cbl.n = 0;
	futex_mutex_lock(&c->lock);
	rc = call_start(c, c->prog, c->vers, proc, xargs, args, xres, res, opts, cb, cb_arg, true,
			&s, &cbl);
	/* Nobody may be polling: the background thread leads for async
	 * calls (no syscall when it already does). */
	if (!rc && !c->leader)
		futex_cond_signal(&c->bg_cv);
	futex_mutex_unlock(&c->lock);
	if (cbl.n)
		clnt_run_callbacks(c, &cbl);
	return rc;
}

/* ---- set-up and tear-down ---- */

void clnt_free(struct rpcrdma_clnt *c)
{
	bc_clnt_free(c->bc);
	if (c->ep)
		rpcrdma_ep_destroy(c->ep);
	clnt_rr_fini(c);
	clnt_v2_fini(c);
	if (c->slots) {
		for (uint32_t i = 0; i < c->nslots; i++) {
			xprt_call_fini(&c->slots[i].call);
		}
		free(c->slots);
	}
	free(c->rpend);
	free(c->rpend_sge);
	xprt_pool_fini(&c->sendp);
	xprt_pool_fini(&c->recvp);
	if (c->evch)
		rpcrdma_evch_destroy(c->evch);
	if (c->cq)
		rpcrdma_cq_destroy(c->cq);
	if (c->pd)
		rpcrdma_pd_free(c->pd);
	if (c->dev)
		rpcrdma_dev_close(c->dev);
	free(c);
}

/* Everything of @c below its options and address (requester.h). */
int clnt_setup(struct rpcrdma_clnt *c, const char *provider, const struct rpcrdma_bc_opts *bc)
{
	struct rpcrdma_cq_attr ca = {0};
	int rc;

	c->state = C_DOWN;
	c->xid_seq = id_seed();
	xprt_credits_init(&c->cr, c->nslots);
	rc = rpcrdma_dev_open(provider, NULL, &c->dev);
	if (!rc)
		rc = rpcrdma_pd_alloc(c->dev, &c->pd);
	if (!rc)
		c->remote_inv = c->remote_inv && xprt_dev_remote_inv(c->dev);
	/* One spare receive: a message no call expects (a duplicate reply
	 * when no call is on the wire) lands in it and it is re-posted at
	 * once (handle_wc), instead of the peer's Send finding no buffer. */
	c->nrecv = c->nslots + 1 + (bc ? bc_clnt_extra_recvs(bc) : 0);
	c->bc_wrs = bc ? bc_clnt_extra_wrs(bc) : 0;
	if (!rc) {
		/* reliable replies' Reads and notifications (whatever the
		 * option: a reply in a Read chunk is pulled and notified all
		 * the same): counted with the backchannel's work requests */
		uint32_t w = 0;

		rc = clnt_rr_init(c, &w);
		c->bc_wrs += w;
	}
	if (!rc) {
		uint32_t w = 0; /* Version Two's RDMA2_ERROR answers, likewise */

		rc = clnt_v2_init(c, &w);
		c->bc_wrs += w;
	}
	ca.cqe = 2 * c->nslots + 16 + (c->nrecv - c->nslots) + c->bc_wrs;
	if (!rc)
		rc = rpcrdma_cq_create(c->dev, &ca, &c->cq);
	if (!rc)
		rc = rpcrdma_evch_create(c->dev, NULL, &c->evch);
	/* Two send buffers per slot (header, message), one receive each. */
	if (!rc)
		rc = xprt_pool_init(&c->sendp, c->pd, 2 * c->nslots, c->inline_send);
	if (!rc)
		rc = xprt_pool_init(&c->recvp, c->pd, c->nrecv, c->inline_recv);
	if (!rc && bc)
		rc = bc_clnt_new(c, &c->lock, c->pd, c->inline_send, bc, &c->bc);
	if (!rc) {
		c->slots = calloc(c->nslots, sizeof(*c->slots));
		c->rpend = calloc(c->nrecv, sizeof(*c->rpend));
		c->rpend_sge = calloc(c->nrecv, sizeof(*c->rpend_sge));
		if (!c->slots || !c->rpend || !c->rpend_sge)
			rc = -ENOMEM;
	}
	if (rc) {
		clnt_free(c);
		return rc;
	}
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct clnt_slot *s = &c->slots[i];

		s->index = i;
		futex_cond_init(&s->cv);
		s->call.pd = c->pd;
		s->call.hdr = xprt_pool_buf(&c->sendp, 2 * i);
		s->call.msg = xprt_pool_buf(&c->sendp, 2 * i + 1);
		s->call.lkey = rpcrdma_mr_stag(c->sendp.mr);
	}
	for (uint32_t i = 0; i < c->nrecv; i++) {
		c->rpend[i].sg = &c->rpend_sge[i];
		c->rpend[i].num_sge = 1;
	}
	c->nfree = c->nslots;
	clnt_loop_init(c);
	rc = clnt_conn_open(c, c->gen);
	if (rc) {
		clnt_free(c);
		return rc;
	}
	c->state = C_UP;
	rc = pthread_create(&c->thr, NULL, clnt_bg_main, c);
	if (rc) {
		clnt_free(c);
		return -rc;
	}
	c->thr_started = true;
	return 0;
}
