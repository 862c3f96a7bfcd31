// SPDX-License-Identifier: MIT
/*
 * The RPC-over-RDMA client (include/rpcrdma/client.h).
 *
 * Structure. A client owns one connection (endpoint) at a time and a fixed
 * array of call slots, one per credit it requests. A slot owns two send
 * buffers of the pre-registered send pool (transport header, RPC message),
 * the MRs it re-registers over each call's chunk memory, and the call's
 * state. The receive pool holds one buffer per slot, all posted while the
 * connection is up (donated to the provider until their RECV completion).
 *
 * Threads (leader/follower). Whoever waits drives the device: a thread
 * that needs a reply (a synchronous caller) becomes the "leader" when no
 * one else is, and itself polls the provider (rpcrdma_dev_progress), reaps
 * completions, matches replies to slots by XID, decodes results and runs
 * completion callbacks (without the lock), first busy-polling for a bounded
 * time (spin_ns), then blocking on the device fd. Other waiters sleep on
 * their slot's condition variable until the leader completes their call or
 * hands leadership over when its own call is done. With one calling thread
 * there is no thread handoff at all: the caller sends, polls and decodes.
 * A background thread leads only when there is work no caller waits for:
 * asynchronous calls in flight (their callbacks run on it), or a lost
 * connection to re-make for queued calls. Everything shared is under
 * clnt->lock; the provider is called without it.
 *
 * Credits (RFC 8166 §3.3.1): a call is "on the wire" from its Send until
 * its reply; xprt_credits (credits.c) bounds that count by the latest
 * grant, starting at one on every connection. Calls that cannot go yet
 * wait in the transmit queue (need_tx) and go in FIFO order as replies
 * return.
 *
 * XIDs: the low 10 bits of a call's XID are its slot index (credits <=
 * 1024), the rest a per-client sequence, so a reply finds its slot in
 * O(1); the full XID is still compared.
 *
 * Connection loss: slots on the wire are fenced (their STags invalidated)
 * and marked for retransmission; once a new connection is up they are
 * marshalled again (same XID, new STags) and sent, up to the new grant.
 * When the configured retries are exhausted the outstanding calls fail
 * with -ECONNRESET; a later call starts connecting again.
 *
 * Deadlines: every call ends by its deadline whatever the peer does. A
 * caller waiting for a free slot waits until its deadline at most; a
 * reconnect (connect, MPA exchange, the pause between attempts) ends at
 * the earliest deadline of the calls waiting for it; a call that times out
 * on the wire keeps its slot and credit (the responder may still answer,
 * RFC 8166 §3.3.1), and when such calls hold every credit while another
 * call waits, the connection is closed and made again, which gives the
 * credits back (timeout_resets).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_int.h"
#include "transport/requester.h"
#include "util/clock.h"
#include "util/futex_cond.h"
#include "transport/backchannel_hooks.h"
#include "transport/xprt.h"

/* Leader: longest single wait in the provider, so timeouts are noticed. */
#define CLNT_BLOCK_MS 20
/* How often the leader looks at call deadlines. */
#define CLNT_TMO_CHECK_NS 5000000ull
/* RFC 6581 §9 IRD/ORD we advertise (conn_open). */
#define CLNT_IRD    128u
#define CLNT_BC_ORD 16u

/* The client whose completion callbacks this thread is running as its
 * leader (lead_callbacks), else NULL. */
_Thread_local struct rpcrdma_clnt *tl_cb_clnt;

/* ------------------------------------------------------------------ */
/* Slots                                                               */
/* ------------------------------------------------------------------ */

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
	s->result.xid = s->call.xid;
	s->result.status = status;
	if (status == -ETIMEDOUT)
		c->st.timeouts++;
	if ((s->call.opts.comp_mask & RPCRDMA_CALL_OPT_RESULT) && s->call.opts.result)
		*s->call.opts.result = s->result;
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

/* Calls issued by completion callbacks wait for the rest of the
 * callbacks of a pass only this long (lead_callbacks). */
#define CLNT_HOLD_NS 20000u

/* Leader, lock dropped: run the completion callbacks of a pass. Calls they
 * issue are queued (call_start) and sent together afterwards (lead); when
 * the callbacks take long, what is queued goes out every CLNT_HOLD_NS so a
 * slow callback does not delay calls issued before it. */
static void lead_callbacks(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	/* now_ns and cb_queued are written by this thread only */
	uint64_t t0 = c->now_ns;

	for (uint32_t i = 0; i < cbl->n; i++) {
		c->cb_last = i + 1 == cbl->n;
		if (cbl->e[i].cb)
			cbl->e[i].cb(c, cbl->e[i].status, cbl->e[i].res, cbl->e[i].arg);
		if (c->cb_queued && i + 1 < cbl->n) {
			uint64_t now = monotonic_ns();

			if (now - t0 >= CLNT_HOLD_NS) {
				struct cb_list failed;

				failed.n = 0;
				futex_mutex_lock(&c->lock);
				c->cb_queued = 0;
				clnt_kick_tx(c, &failed);
				futex_mutex_unlock(&c->lock);
				clnt_run_callbacks(c, &failed);
				t0 = now;
			}
		}
	}
	cbl->n = 0;
}

/* ------------------------------------------------------------------ */
/* Transmission                                                        */
/* ------------------------------------------------------------------ */

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
	if (c->hook.on_send)
		c->hook.on_send(c->hook.arg, k->hdr, k->hdr_len, k->msg_len);
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

		rc = rpcrdma_post_send_recv(c->ep, &wr, c->rpend, c->nrpend, &np);
		if (np < c->nrpend) {
			c->nrpend = 0;
			*recv_failed = true;
			return rc ? rc : -EIO;
		}
		c->nrpend = 0;
	} else {
		rc = rpcrdma_post_send(c->ep, &wr);
	}
	if (rc)
		return rc;
	s->on_wire = true;
	s->result.transmissions++;
	s->result.call_proc = k->call_proc;
	s->result.read_chunks = k->nread;
	s->result.write_chunks = k->nwrite;
	s->result.reply_chunk = k->reply_offered;
	if (s->result.transmissions > 1)
		c->st.retransmits++;
	xprt_credits_sent(&c->cr);
	c->st.outstanding = c->cr.on_wire;
	if (c->cr.on_wire > c->st.max_outstanding)
		c->st.max_outstanding = c->cr.on_wire;
	if (k->call_proc == RPCRDMA1_NOMSG)
		c->st.long_calls++;
	else
		c->st.short_msgs++;
	c->st.read_chunks += k->nread;
	c->st.read_bytes += k->read_bytes;
	c->st.write_chunks += k->nwrite;
	c->st.reply_chunks += k->reply_offered;
	c->st.inline_bytes_tx += k->hdr_len + (k->nsge > 1 ? k->msg_len : 0);
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
		s->need_tx = true;
		s->qnext = c->txq_head;
		c->txq_head = s;
		if (!c->txq_tail)
			c->txq_tail = s;
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

/* ------------------------------------------------------------------ */
/* Connection                                                          */
/* ------------------------------------------------------------------ */

static void drain_cq(struct rpcrdma_clnt *c)
{
	struct rpcrdma_wc wc[16];

	while (rpcrdma_cq_poll(c->cq, wc, 16) > 0)
		;
}

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

/* Lock not held: pause @ns between connection attempts, or less when a
 * call reaches its deadline meanwhile (true then). */
static bool conn_backoff(struct rpcrdma_clnt *c, uint64_t ns)
{
	uint64_t end = monotonic_ns() + ns;

	for (;;) {
		uint64_t now = monotonic_ns();

		if (clnt_deadline_passed(c, now))
			return true;
		if (now >= end || c->stop)
			return false;
		usleep((useconds_t)((end - now < 10000000u ? end - now : 10000000u) / 1000u));
	}
}

/* Create an endpoint, post every receive and connect; wait for the
 * outcome, at most connect_timeout_ms (+1 s for the provider's own) and
 * never past the deadline of a call waiting for the connection (a listener
 * that accepts TCP and never answers the MPA request must not hold calls
 * past their timeouts). Called without the lock by the leader (the only
 * thread driving the device at that time) or by the creator. */
int clnt_conn_open(struct rpcrdma_clnt *c, uint32_t gen)
{
	struct rpcrdma_ep_attr ea = {0};
	struct rpcrdma_event ev;
	struct rpcrdma_ep *ep;
	uint8_t pdata[RPCRDMA1_CM_SIZE];
	uint64_t end;
	int rc;

	ea.comp_mask = RPCRDMA_EP_ATTR_CAPS | RPCRDMA_EP_ATTR_CRC | RPCRDMA_EP_ATTR_TIMEOUT |
		       RPCRDMA_EP_ATTR_IRD_ORD;
	/* RFC 6581 §9: the server RDMA Reads our Read chunks (IRD, 128 as the
	 * Linux client advertises); we Read only a backchannel's reverse
	 * Read chunks (ORD). */
	ea.ird = CLNT_IRD;
	ea.ord = c->bc ? CLNT_BC_ORD : 0;
	ea.send_cq = c->cq;
	ea.recv_cq = c->cq;
	ea.evch = c->evch;
	ea.max_send_wr = c->nslots + 8 + c->bc_wrs;
	ea.max_recv_wr = c->nrecv;
	ea.max_send_sge = 2;
	ea.max_recv_sge = 1;
	ea.mpa_crc = c->mpa_crc;
	ea.connect_timeout_ms = c->connect_timeout_ms;
	rc = rpcrdma_ep_create(c->pd, &ea, &ep);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < c->nrecv; i++) {
		rc = xprt_pool_post_recv(&c->recvp, ep, i, clnt_wrid(gen, CLNT_WR_RECV, i));
		if (rc)
			goto fail;
	}
	/* RFC 8797: advertise our inline sizes and remote invalidation. */
	rc = xprt_pdata_build(pdata, sizeof(pdata), c->inline_send, c->inline_recv, c->remote_inv);
	if (rc)
		goto fail;
	rc = rpcrdma_connect(ep, (const struct sockaddr *)&c->addr, c->alen, pdata, sizeof(pdata));
	if (rc)
		goto fail;
	end = monotonic_ns() + (uint64_t)c->connect_timeout_ms * 1000000ull + 1000000000ull;
	for (;;) {
		if (rpcrdma_evch_get(c->evch, &ev) == 0) {
			if (ev.ep != ep)
				continue; /* an old endpoint's late event */
			if (ev.type == RPCRDMA_EV_ESTABLISHED) {
				struct xprt_limits lim;

				xprt_negotiate(ev.private_data, ev.private_data_len, c->inline_send,
					       c->inline_recv, c->remote_inv, &lim);
				futex_mutex_lock(&c->lock);
				c->ep = ep;
				c->lim = lim;
				c->st.inline_send = lim.inline_send;
				c->st.inline_recv = lim.inline_recv;
				c->st.remote_invalidate = lim.remote_inv;
				c->st.connections = 1;
				xprt_credits_reset(&c->cr);
				c->st.credits = c->cr.grant;
				/* RFC 8167 §6: re-enabled on every new connection. */
				if (c->bc)
					bc_clnt_up(c->bc, ep, &lim, gen, gen != 0);
				futex_mutex_unlock(&c->lock);
				return 0;
			}
			rc = ev.status ? ev.status : -ECONNREFUSED;
			goto fail;
		}
		uint64_t now = monotonic_ns();

		if (now > end || clnt_deadline_passed(c, now)) {
			rc = -ETIMEDOUT;
			goto fail;
		}
		rc = rpcrdma_dev_progress(c->dev, 20);
		if (rc < 0 && rc != -EINTR)
			goto fail;
		/* Completions of an older endpoint may still arrive. */
		drain_cq(c);
	}
fail:
	rpcrdma_ep_destroy(ep);
	/* Drop the flush completions of the endpoint we just destroyed. */
	drain_cq(c);
	return rc;
}

/* The connection is gone (lock held): fence, queue for retransmission. */
void clnt_conn_lost(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	if (c->state != C_UP)
		return;
	c->state = C_DOWN;
	c->gen++;
	c->nrpend = 0; /* the new connection posts every receive */
	c->st.conn_errors++;
	c->st.connections = 0;
	if (c->bc)
		bc_clnt_down(c->bc); /* RFC 8167 §5.4: the server sends again */
	/* Retransmit in XID-sequence order, ahead of calls never sent. */
	struct clnt_slot *head = NULL, **tail;

	for (uint32_t i = 0; i < c->nslots; i++) {
		struct clnt_slot *s = &c->slots[i];

		if (!s->in_use)
			continue;
		/* Memory registered for the old connection is invalidated
		 * before anything is sent again. */
		if (s->call.mr_used)
			c->st.local_invalidations += xprt_call_fence(&s->call, false, 0);
		if (!s->on_wire)
			continue;
		s->on_wire = false;
		if (s->zombie) {
			clnt_slot_free(c, s);
		} else if (!s->done && s->result.transmissions > c->retries) {
			/* Lost on every connection it was sent on: a call that
			 * keeps breaking connections fails clearly instead of
			 * being retransmitted forever. */
			clnt_slot_complete(c, s, -ECONNRESET, cbl);
		} else if (!s->done) {
			/* insertion by XID sequence (rare path) */
			struct clnt_slot **pp = &head;

			while (*pp && (int32_t)(((*pp)->call.xid >> XID_SLOT_BITS) -
						(s->call.xid >> XID_SLOT_BITS)) < 0)
				pp = &(*pp)->qnext;
			s->qnext = *pp;
			*pp = s;
			s->need_tx = true;
		}
	}
	if (head) {
		for (tail = &head; *tail; tail = &(*tail)->qnext)
			if (!(*tail)->qnext)
				break;
		(*tail)->qnext = c->txq_head;
		if (!c->txq_head)
			c->txq_tail = *tail;
		c->txq_head = head;
	}
	xprt_credits_reset(&c->cr);
	c->st.outstanding = 0;
}

void clnt_fail_all(struct rpcrdma_clnt *c, int status, struct cb_list *cbl)
{
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct clnt_slot *s = &c->slots[i];

		if (!s->in_use)
			continue;
		if (s->zombie) {
			s->on_wire = false;
			clnt_slot_free(c, s);
		} else if (!s->done) {
			s->on_wire = false;
			if (s->call.mr_used)
				c->st.local_invalidations += xprt_call_fence(&s->call, false, 0);
			clnt_slot_complete(c, s, status, cbl);
		}
		if (cbl->n == CB_MAX) {
			futex_mutex_unlock(&c->lock);
			clnt_run_callbacks(c, cbl);
			futex_mutex_lock(&c->lock);
		}
	}
}

/* Leader, lock held, connection down: re-connect with the configured
 * number of attempts, then retransmit; or fail what is outstanding. Drops
 * the lock while connecting. When a call reaches its deadline first, that
 * call fails with -ETIMEDOUT and the connection stays down (attempts
 * counted on: the next pass goes on for the calls still waiting). */
void clnt_reconnect(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	struct rpcrdma_ep *old = c->ep;
	uint32_t gen = c->gen;
	int rc = -ECONNRESET;
	bool expired = false;

	c->ep = NULL;
	futex_mutex_unlock(&c->lock);
	if (old) {
		rpcrdma_ep_destroy(old);
		drain_cq(c);
	}
	while (c->attempts < c->retries && !c->stop) {
		rc = clnt_conn_open(c, gen);
		if (!rc)
			break;
		c->attempts++;
		expired = clnt_deadline_passed(c, monotonic_ns());
		if (!expired && c->attempts < c->retries)
			expired = conn_backoff(c, 100000000ull * c->attempts);
		if (expired)
			break;
	}
	futex_mutex_lock(&c->lock);
	if (!rc) {
		c->attempts = 0;
		c->state = C_UP;
		c->st.reconnects++;
		clnt_kick_tx(c, cbl);
	} else if (expired && !c->stop) {
		clnt_check_timeouts(c, cbl);
	} else {
		c->attempts = 0;
		c->state = C_DEAD;
		c->txq_head = c->txq_tail = NULL;
		for (uint32_t i = 0; i < c->nslots; i++)
			c->slots[i].need_tx = false;
		clnt_fail_all(c, -ECONNRESET, cbl);
	}
}

/* ------------------------------------------------------------------ */
/* Receive                                                             */
/* ------------------------------------------------------------------ */

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
			   const struct rpcrdma1_hdr *h)
{
	const uint8_t *msg;
	uint64_t mlen;
	uint32_t w[2];

	if (h->vers != RPCRDMA1_VERSION)
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
	if (mlen < sizeof(w))
		return 0;
	memcpy(w, msg, sizeof(w));
	if (ntohl(w[1]) == 0) /* msg_type CALL */
		return 2;
	return ntohl(w[0]) != s->call.xid ? 1 : 0;
}

/* A received message that is not a reverse call. True when it ended a call
 * on the wire (its receive is given back with the next call, see rpend);
 * false when it was dropped (a reply to no call on the wire, a duplicate,
 * a late one after the connection's call is gone, a wrong RPC XID, a CALL):
 * the caller re-posts that receive at once, so the calls on the wire keep
 * one posted receive each. */
static bool handle_reply(struct rpcrdma_clnt *c, uint32_t idx, const struct rpcrdma_wc *wc,
			 struct cb_list *cbl)
{
	const uint8_t *buf = xprt_pool_buf(&c->recvp, idx);
	struct rpcrdma1_hdr *h = &c->rh;
	struct clnt_slot *s;
	uint32_t len = wc->byte_len;
	int rc, st;

	/* RFC 8167 §4.1: a reverse Call (msg_type CALL) lands in any receive
	 * buffer; the backchannel copies it out, the buffer is re-posted. */
	if (c->bc && bc_clnt_recv(c->bc, buf, len))
		return true; /* re-posted at once (handle_wc: c->bc) */
	c->st.inline_bytes_rx += len;
	if (len < RPCRDMA1_FIXED_SIZE) {
		c->st.bad_headers++;
		return false;
	}
	/* The common Short reply word by word (short.c), else in full. */
	rc = xprt_short_decode_hdr(buf, len, h) ? 0 : rpcrdma1_decode_buf(buf, len, h);
	s = slot_by_xid(c, h->xid);
	if (!s) {
		/* Not fatal: count and drop. */
		c->st.unmatched_replies++;
		return false;
	}
	if (!rc) {
		int bad = reply_rpc_check(s, buf, len, h);

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
	if (h->vers == RPCRDMA1_VERSION && !(c->bc && h->proc == RPCRDMA1_ERROR))
		xprt_credits_update(&c->cr, h->credit);
	c->st.credits = c->cr.grant;
	s->on_wire = false;
	xprt_credits_done(&c->cr);
	c->st.outstanding = c->cr.on_wire;
	if (s->zombie) {
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
	if (rc) {
		c->st.bad_headers++;
		if (rc == -EPROTONOSUPPORT)
			st = -EPROTONOSUPPORT;
		else
			st = -EBADMSG;
	} else {
		st = xprt_reply_process(&s->call, buf, len, h, &s->result);
		if (h->proc == RPCRDMA1_ERROR) {
			if (h->err == RPCRDMA1_ERR_VERS)
				c->st.err_vers_rx++;
			else
				c->st.err_chunk_rx++;
		} else {
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
	}
	c->st.replies++;
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
	if (kind != CLNT_WR_RECV || idx >= c->nrecv)
		return;
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

	for (uint32_t i = 0; i < c->nslots; i++) {
		struct clnt_slot *s = &c->slots[i];

		if (s->in_use && !s->done && !s->zombie && s->deadline && now > s->deadline)
			clnt_slot_complete(c, s, -ETIMEDOUT, cbl);
	}
}

/* Lock held: do calls that ended on the wire without a reply (timed out:
 * completed or zombies) hold every credit in use while another call waits
 * for a credit or a slot? Their replies may never come (RFC 8166 §3.3.1
 * gives no other way to get a credit back): the connection is then closed
 * and made again. */
bool clnt_credits_held_by_dead(const struct rpcrdma_clnt *c)
{
	uint32_t n = 0;

	if (c->state != C_UP || !c->cr.on_wire)
		return false;
	if (!c->nslot_wait && !(c->txq_head && !xprt_credits_may_send(&c->cr)))
		return false;
	for (uint32_t i = 0; i < c->nslots; i++) {
		const struct clnt_slot *s = &c->slots[i];

		if (s->in_use && s->on_wire && (s->zombie || s->done))
			n++;
	}
	return n >= c->cr.on_wire;
}

/* ------------------------------------------------------------------ */
/* Progress: leader/follower                                           */
/* ------------------------------------------------------------------ */

/* Bytes the connection moved so far (both directions). */
static uint64_t ep_bytes(struct rpcrdma_ep *ep)
{
	struct rpcrdma_ep_stats st;

	if (!ep || rpcrdma_ep_query_stats(ep, &st))
		return 0;
	return st.tx_bytes + st.rx_bytes;
}

/* Work only the background thread would do: async calls not completed, or
 * queued calls waiting for a connection. */
static bool bg_has_work(const struct rpcrdma_clnt *c)
{
	/* With a backchannel, reverse calls may arrive at any time and the
	 * connection is kept up for them (RFC 8167 §5.4): always lead. */
	/* A caller waiting for a slot: replies (or credits_held_by_dead)
	 * free it only while someone drives the device. */
	return !c->stop && (c->nasync > 0 || (c->state == C_DOWN && c->txq_head) ||
			    c->nslot_wait > 0 || (c->bc && c->state != C_DEAD));
}

/*
 * Drive the device until @mine is done (a synchronous caller) or, for the
 * background thread (@mine NULL), until there is no work it alone must do
 * or a synchronous caller could take over. Lock held on entry and exit
 * (dropped around provider calls and callbacks); c->leader is ours.
 */
static void lead(struct rpcrdma_clnt *c, struct clnt_slot *mine)
{
	struct rpcrdma_wc wc[32];
	struct rpcrdma_event ev;
	struct cb_list cbl;
	uint64_t t, spin_end, next_tmo, budget;
	uint64_t blocked_at = 0; /* when the loop started blocking, 0: not blocked */
	bool spinning;           /* a spin phase is running and not yet judged */
	uint32_t idle = 0;

	cbl.n = 0;
	t = monotonic_ns();
	budget = xprt_spin_budget(&c->spin);
	spin_end = budget > UINT64_MAX - t ? UINT64_MAX : t + budget;
	spinning = budget != 0;
	next_tmo = t + CLNT_TMO_CHECK_NS;
	for (;;) {
		if (mine ? mine->done : (!bg_has_work(c) || c->nwaiting))
			break;
		if (c->stop && !mine)
			break;
		if (c->state == C_DOWN) {
			clnt_reconnect(c, &cbl);
			goto callbacks;
		}
		if (c->state == C_DEAD)
			break; /* nothing to drive; callers fail */
		futex_mutex_unlock(&c->lock);
	unlocked:;
		int tmo, n, m = 0;

		for (;;) {
			tmo = t < spin_end ? 0 : CLNT_BLOCK_MS;
			if (tmo && !blocked_at)
				blocked_at = t;
			/* Completions appear during progress (reaped with it
			 * in one provider step) or, for errors, when work is
			 * posted: the CQ is also looked at when progress
			 * produced something that was not ours, after a wait,
			 * and every 16th idle spin, which is also when the
			 * state under the lock is looked at again. Idle spin
			 * iterations in between take no lock. */
			n = rpcrdma_dev_progress_poll(c->dev, tmo, c->cq, wc, 32, &m);
			if (m > 0)
				break;
			if (n != 0 || tmo != 0 || (++idle & 15) == 0) {
				m = rpcrdma_cq_poll(c->cq, wc, 32);
				break;
			}
			xprt_spin_hint();
			/* The clock every 4th idle iteration: each one is a
			 * system call already, so the spin overshoots its end by
			 * three of them at most. */
			if ((idle & 3) != 0)
				continue;
			if (budget > CLNT_SPIN_NS && spin_end - t < budget - CLNT_SPIN_NS)
				xprt_spin_idle(&c->spin); /* spun past the base budget: let
						     a peer on this CPU run */
			t = monotonic_ns();
			if (t >= spin_end)
				break;
		}
		bool evs = n > m;

		futex_mutex_lock(&c->lock);
		for (;;) {
			/* one place that handles completions (inlined) */
			for (int i = 0; i < m; i++)
				clnt_handle_wc(c, &wc[i], &cbl);
			if (m != 32)
				break;
			/* more completions than one batch: keep reaping */
			futex_mutex_unlock(&c->lock);
			m = rpcrdma_cq_poll(c->cq, wc, 32);
			futex_mutex_lock(&c->lock);
		}
		t = monotonic_ns();
		c->now_ns = t;
		if (n > 0 || m > 0) {
			/* Activity: a spin that saw it paid off; spin again. */
			if (spinning && tmo == 0)
				xprt_spin_result(&c->spin, true);
			if (blocked_at)
				xprt_spin_woke(&c->spin, t - blocked_at);
			blocked_at = 0;
			budget = xprt_spin_budget(&c->spin);
			spin_end = budget > UINT64_MAX - t ? UINT64_MAX : t + budget;
			spinning = budget != 0;
		} else if (spinning && t >= spin_end) {
			/* No completion, but bytes may be moving (a large
			 * chunk being read or written): that is activity too. */
			uint64_t b = ep_bytes(c->ep);

			if (b != c->spin_bytes) {
				c->spin_bytes = b;
				spin_end = t + budget;
			} else {
				xprt_spin_result(&c->spin, false);
				spinning = false;
			}
		}
		if (evs || t >= next_tmo) {
			futex_mutex_unlock(&c->lock);
			while (rpcrdma_evch_get(c->evch, &ev) == 0) {
				futex_mutex_lock(&c->lock);
				if (ev.ep == c->ep && (ev.type == RPCRDMA_EV_DISCONNECTED ||
						       ev.type == RPCRDMA_EV_TERMINATE))
					clnt_conn_lost(c, &cbl);
				futex_mutex_unlock(&c->lock);
			}
			futex_mutex_lock(&c->lock);
		}
		if (t >= next_tmo) {
			next_tmo = t + CLNT_TMO_CHECK_NS;
			clnt_check_timeouts(c, &cbl);
			if (clnt_credits_held_by_dead(c)) {
				c->st.timeout_resets++;
				clnt_conn_lost(c, &cbl); /* clnt_reconnect() closes it */
			}
		}
		if (c->txq_head)
			clnt_kick_tx(c, &cbl);
	callbacks:
		while (cbl.n) {
			/* The background leader of a running stream of async
			 * calls (nothing else to watch) may go straight back to
			 * progress after the callbacks, without the lock: what
			 * the loop's head looks at is looked at here, and again
			 * on the next pass that reaps something or waits. */
			bool stream =
			    !mine && !c->bc && !c->stop && !c->nwaiting && c->state == C_UP;

			/* Asynchronous calls the callbacks issue are queued,
			 * not sent one by one (call_start): the last callback's
			 * call takes them along, in one transmit (kick_tx). */
			c->cb_issued = 0;
			futex_mutex_unlock(&c->lock);
			tl_cb_clnt = c;
			lead_callbacks(c, &cbl);
			tl_cb_clnt = NULL;
			if (stream && c->cb_issued && !c->cb_queued)
				goto unlocked; /* issued and sent: nasync > 0 */
			futex_mutex_lock(&c->lock);
			c->cb_queued = 0;
			if (c->txq_head)
				clnt_kick_tx(c, &cbl);
		}
		/* RPCRDMA_BC_OPT_INLINE: reverse calls are dispatched here. */
		if (c->bc && bc_clnt_inline_pending(c->bc)) {
			futex_mutex_unlock(&c->lock);
			bc_clnt_run_inline(c->bc);
			futex_mutex_lock(&c->lock);
		}
	}
}

/* The leader is leaving (lock held): pass the device to a sleeping
 * synchronous caller whose call is still open, else to the background
 * thread if it has work. Cheap when there is nobody (no syscall). */
static void handoff(struct rpcrdma_clnt *c)
{
	if (c->leader)
		return;
	if (c->nwaiting) {
		for (uint32_t i = 0; i < c->nslots; i++) {
			struct clnt_slot *s = &c->slots[i];

			if (s->waiting && !s->done) {
				futex_cond_signal(&s->cv);
				return;
			}
		}
	}
	if (bg_has_work(c))
		futex_cond_signal(&c->bg_cv);
}

/* Synchronous caller, lock held: wait for @s, leading when no one does. */
void clnt_wait_done(struct rpcrdma_clnt *c, struct clnt_slot *s)
{
	while (!s->done) {
		if (!c->leader && c->state != C_DEAD) {
			c->leader = true;
			lead(c, s);
			c->leader = false;
		} else if (!s->done) {
			s->waiting = true;
			c->nwaiting++;
			if (s->deadline) {
				struct timespec ts;

				realtime_at(s->deadline, &ts);
				(void)futex_cond_timedwait(&s->cv, &c->lock, &ts);
			} else {
				futex_cond_wait(&s->cv, &c->lock);
			}
			c->nwaiting--;
			s->waiting = false;
			/* The leader checks deadlines; should it be held up
			 * (connecting, in a callback), the call still ends. */
			if (!s->done && s->deadline && monotonic_ns() > s->deadline)
				clnt_slot_complete(c, s, -ETIMEDOUT, NULL);
		}
		if (c->state == C_DEAD && !s->done)
			clnt_slot_complete(c, s, -ECONNRESET, NULL);
	}
	handoff(c);
}

static void *bg_main(void *arg)
{
	struct rpcrdma_clnt *c = arg;

	if (c->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	futex_mutex_lock(&c->lock);
	while (!c->stop) {
		if (c->leader || c->nwaiting || !bg_has_work(c)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 50000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			(void)futex_cond_timedwait(&c->bg_cv, &c->lock, &ts);
			continue;
		}
		c->leader = true;
		lead(c, NULL);
		c->leader = false;
		handoff(c);
	}
	futex_mutex_unlock(&c->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {0}, *res = NULL;
	char ps[8];
	int rc;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host && *host ? host : "127.0.0.1", ps, &hints, &res);
	if (rc || !res)
		return -ENOENT;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int apply_opts(struct rpcrdma_clnt *c, const struct rpcrdma_clnt_opts *o)
{
	uint32_t m = o ? o->comp_mask : 0;

	c->nslots = RPCRDMA_DEFAULT_CREDITS;
	c->inline_send = c->inline_recv = RPCRDMA_DEFAULT_INLINE;
	c->timeout_ms = 30000;
	c->connect_timeout_ms = 10000;
	c->retries = 3;
	c->ddp_threshold = 1024;
	c->cpu = -1;
	c->progress = RPCRDMA_PROGRESS_THREAD;
	c->remote_inv = true;
	c->mpa_crc = true;
	if (m & RPCRDMA_CLNT_OPT_CREDITS) {
		if (o->credits < 1 || o->credits > 1024)
			return -EINVAL;
		c->nslots = o->credits;
	}
	if (m & RPCRDMA_CLNT_OPT_INLINE) {
		if (!xprt_inline_valid(o->inline_send) || !xprt_inline_valid(o->inline_recv))
			return -EINVAL;
		c->inline_send = o->inline_send;
		c->inline_recv = o->inline_recv;
	}
	if (m & RPCRDMA_CLNT_OPT_TIMEOUT)
		c->timeout_ms = o->timeout_ms;
	if (m & RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT)
		c->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : 10000;
	if (m & RPCRDMA_CLNT_OPT_RETRIES)
		c->retries = o->retries;
	if (m & RPCRDMA_CLNT_OPT_DDP_THRESHOLD)
		c->ddp_threshold = o->ddp_threshold ? o->ddp_threshold : 1;
	if (m & RPCRDMA_CLNT_OPT_CPU)
		c->cpu = o->cpu;
	if (m & RPCRDMA_CLNT_OPT_PROGRESS)
		c->progress = o->progress;
	if (m & RPCRDMA_CLNT_OPT_REMOTE_INV)
		c->remote_inv = o->remote_invalidate != 0;
	if (m & RPCRDMA_CLNT_OPT_MPA_CRC)
		c->mpa_crc = o->mpa_crc != 0;
	c->tirpc_reply =
	    (m & RPCRDMA_CLNT_OPT_TIRPC_REPLY) ? o->tirpc_reply_size : RPCRDMA_TIRPC_REPLY_SIZE;
	if ((m & RPCRDMA_CLNT_OPT_AUTH) && o->auth_flavor != RPCRDMA_RPC_AUTH_NONE) {
		int rc = rpcrdma_rpc_encode_cred_verf(c->auth, sizeof(c->auth), o->auth_flavor,
						      o->auth_sys, &c->auth_len);
		if (rc)
			return rc == -E2BIG ? -EINVAL : rc;
	}
	return 0;
}

void clnt_free(struct rpcrdma_clnt *c)
{
	bc_clnt_free(c->bc);
	if (c->ep)
		rpcrdma_ep_destroy(c->ep);
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

int rpcrdma_clnt_create(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
			const struct rpcrdma_clnt_opts *opts, struct rpcrdma_clnt **out)
{
	return clnt_create_ex(host, port, prog, vers, opts, NULL, out);
}

int clnt_create_ex(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
		   const struct rpcrdma_clnt_opts *opts, const struct rpcrdma_bc_opts *bc,
		   struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt *c = calloc(1, sizeof(*c));
	struct rpcrdma_cq_attr ca = {0};
	int rc;

	if (!c || !out) {
		free(c);
		return c ? -EINVAL : -ENOMEM;
	}
	futex_mutex_init(&c->lock);
	futex_cond_init(&c->slot_cv);
	futex_cond_init(&c->bg_cv);
	rc = apply_opts(c, opts);
	if (!rc)
		rc = resolve(host, port ? port : RPCRDMA_DEFAULT_PORT, &c->addr, &c->alen);
	if (rc) {
		clnt_free(c);
		return rc;
	}
	c->prog = prog;
	c->vers = vers;
	c->state = C_DOWN;
	c->xid_seq = id_seed();
	xprt_credits_init(&c->cr, c->nslots);
	rc = rpcrdma_dev_open(
	    (opts && (opts->comp_mask & RPCRDMA_CLNT_OPT_PROVIDER)) ? opts->provider : NULL, NULL,
	    &c->dev);
	if (!rc)
		rc = rpcrdma_pd_alloc(c->dev, &c->pd);
	/* One spare receive: a message no call expects (a duplicate reply
	 * when no call is on the wire) lands in it and it is re-posted at
	 * once (handle_wc), instead of the peer's Send finding no buffer. */
	c->nrecv = c->nslots + 1 + (bc ? bc_clnt_extra_recvs(bc) : 0);
	c->bc_wrs = bc ? bc_clnt_extra_wrs(bc) : 0;
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
	xprt_spin_init(&c->spin, CLNT_SPIN_NS, c->progress == RPCRDMA_PROGRESS_BUSY_POLL);
	rc = clnt_conn_open(c, c->gen);
	if (rc) {
		clnt_free(c);
		return rc;
	}
	c->state = C_UP;
	rc = pthread_create(&c->thr, NULL, bg_main, c);
	if (rc) {
		clnt_free(c);
		return -rc;
	}
	c->thr_started = true;
	*out = c;
	return 0;
}

void rpcrdma_clnt_destroy(struct rpcrdma_clnt *c)
{
	struct cb_list cbl = {0};

	if (!c)
		return;
	futex_mutex_lock(&c->lock);
	c->stop = true;
	futex_cond_broadcast(&c->bg_cv);
	futex_mutex_unlock(&c->lock);
	if (c->thr_started)
		pthread_join(c->thr, NULL);
	futex_mutex_lock(&c->lock);
	clnt_fail_all(c, -ECANCELED, &cbl);
	futex_mutex_unlock(&c->lock);
	clnt_run_callbacks(c, &cbl);
	/* Synchronous callers still waiting wake with -ECANCELED and give
	 * their slots back (a leader among them leaves the provider within
	 * CLNT_BLOCK_MS); wait for them. */
	futex_mutex_lock(&c->lock);
	for (;;) {
		uint32_t busy = 0;

		for (uint32_t i = 0; i < c->nslots; i++)
			if (c->slots[i].in_use && !c->slots[i].zombie)
				busy++;
		if (!busy && !c->leader)
			break;
		futex_cond_wait(&c->slot_cv, &c->lock);
	}
	futex_mutex_unlock(&c->lock);
	if (c->ep)
		rpcrdma_disconnect(c->ep);
	clnt_free(c);
}

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
	s->call.xid = (c->xid_seq++ << XID_SLOT_BITS) | s->index;
	s->call.prog = prog;
	s->call.vers = vers;
	s->call.proc = proc;
	s->call.xargs = xargs;
	s->call.args = args;
	s->call.xres = xres;
	s->call.res = res;
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
	s->deadline = tmo ? t0 + (uint64_t)tmo * 1000000ull : 0;
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

int rpcrdma_clnt_call(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
		      xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts)
{
	struct cb_list cbl;
	struct clnt_slot *s;
	int rc;

	if (!c)
		return -EINVAL;
	cbl.n = 0;
	futex_mutex_lock(&c->lock);
	rc = call_start(c, c->prog, c->vers, proc, xargs, args, xres, res, opts, NULL, NULL, false,
			&s, &cbl);
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

int rpcrdma_clnt_call_async(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
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

int rpcrdma_clnt_stats(struct rpcrdma_clnt *c, struct rpcrdma_xprt_stats *st)
{
	if (!c || !st)
		return -EINVAL;
	futex_mutex_lock(&c->lock);
	*st = c->st;
	futex_mutex_unlock(&c->lock);
	return 0;
}

void rpcrdma_clnt_set_testhook(struct rpcrdma_clnt *c, const struct clnt_testhook *h)
{
	futex_mutex_lock(&c->lock);
	c->hook = *h;
	futex_mutex_unlock(&c->lock);
}

int rpcrdma_clnt_test_disconnect(struct rpcrdma_clnt *c)
{
	int rc = -ENOTCONN;

	futex_mutex_lock(&c->lock);
	if (c->ep && c->state == C_UP)
		rc = rpcrdma_disconnect(c->ep);
	futex_mutex_unlock(&c->lock);
	return rc;
}

uint32_t clnt_tirpc_reply_size(const struct rpcrdma_clnt *c)
{
	return c->tirpc_reply;
}

/* ---- the backchannel's view of a client (transport/backchannel_hooks.h) ---- */

struct bc_clnt *clnt_bc(struct rpcrdma_clnt *c)
{
	return c->bc;
}

/* As rpcrdma_clnt_call() to another program on the same connection. */
int clnt_call_prog(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers, uint32_t proc,
		   xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
		   const struct rpcrdma_call_opts *opts)
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
