// SPDX-License-Identifier: MIT
/*
 * The forward requester's connection (transport/requester.h): opening
 * it, noticing its loss, reconnecting with a pause between attempts, and
 * what happens to the calls meanwhile.
 *
 * Connection loss: slots on the wire are fenced (their STags invalidated)
 * and marked for retransmission; once a new connection is up they are
 * marshalled again (same XID, RFC 8166 §3.3; new STags) and sent, up to
 * the new grant (§3.3.1 starts every connection at one credit). A call
 * lost on more than `retries` connections fails with -ECONNRESET.
 *
 * Reconnecting is persistent: attempts go on, with a pause that doubles
 * from 100 ms up to 2 s (+-25% jitter), for as long as calls wait for the
 * connection. A connection attempt (connect, MPA exchange, the pause
 * between attempts) ends at the earliest deadline of the calls waiting
 * for it; a call fails at its deadline with -ETIMEDOUT, and its result's
 * conn_error names the last attempt's error. When no call waits any more
 * the connection stays down until the next call.
 * When calls that timed out on the wire hold every credit while another
 * call waits, the connection is closed and made again, which gives the
 * credits back (credits_held_by_dead, timeout_resets).
 */
#include <errno.h>
#include <unistd.h>

#include "transport/backchannel_hooks.h"
#include "transport/requester.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/probe.h"

/* RFC 6581 §9 IRD/ORD we advertise (conn_open). */
#define CLNT_IRD    128u
#define CLNT_BC_ORD 16u

static void drain_cq(struct rpcrdma_clnt *c)
{
	struct rpcrdma_wc wc[16];

	while (rpcrdma_cq_poll(c->cq, wc, 16) > 0)
		;
}

/* The pause before connection attempt @n + 1 (@n failed so far): 100 ms
 * doubled per failure up to 2 s, then +-25% so that clients that lost the
 * same server do not all come back at the same moment. Leader only. */
#define CONN_BACKOFF_MIN_NS 100000000ull
#define CONN_BACKOFF_MAX_NS 2000000000ull

static uint64_t conn_backoff_ns(struct rpcrdma_clnt *c, uint32_t n)
{
	uint64_t b = CONN_BACKOFF_MIN_NS, x;

	for (uint32_t i = 1; i < n && b < CONN_BACKOFF_MAX_NS; i++)
		b <<= 1;
	if (b > CONN_BACKOFF_MAX_NS)
		b = CONN_BACKOFF_MAX_NS;
	if (!c->jitter)
		c->jitter = monotonic_ns() ^ ((uint64_t)(uintptr_t)c << 16) ^ 0x9e3779b97f4a7c15ull;
	/* xorshift64 */
	x = c->jitter;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->jitter = x;
	return b - b / 4 + x % (b / 2);
}

/* Lock not held: does a call still wait for the connection (queued or
 * lost on the wire, not completed)? */
static bool conn_wanted(struct rpcrdma_clnt *c)
{
	bool w;

	futex_mutex_lock(&c->lock);
	w = c->txq_head != NULL || c->nslot_wait > 0;
	futex_mutex_unlock(&c->lock);
	return w;
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
		if (now >= end || __atomic_load_n(&c->stop, __ATOMIC_RELAXED))
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
	 * Linux client advertises); we Read a backchannel's reverse Read
	 * chunks and replies in responder-provided Read chunks, which any
	 * client pulls (ORD; c->rr always exists, issue 32). */
	ea.ird = CLNT_IRD;
	ea.ord = c->bc || c->rr ? CLNT_BC_ORD : 0; /* and reliable replies' pulls */
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
	rc = rpcrdma_connect(ep, (const struct sockaddr *)&c->addr, c->alen,
			     c->pdata ? pdata : NULL, c->pdata ? sizeof(pdata) : 0);
	if (rc)
		goto fail;
	end = monotonic_ns() + (uint64_t)c->connect_timeout_ms * 1000000ull + 1000000000ull;
	for (;;) {
		if (rpcrdma_evch_get(c->evch, &ev) == 0) {
			if (ev.ep != ep)
				continue; /* an old endpoint's late event */
			if (ev.type == RPCRDMA_EV_ESTABLISHED) {
				struct xprt_limits lim;

				/* A server that got no private data from us
				 * assumes 1024 each way (RFC 8797 §4.1)
				 * whatever it sent: so do we. */
				xprt_negotiate(c->pdata ? ev.private_data : NULL,
					       c->pdata ? ev.private_data_len : 0, c->inline_send,
					       c->inline_recv, c->remote_inv, &lim);
				futex_mutex_lock(&c->lock);
				c->ep = ep;
				c->lim = lim;
				clnt_v2_conn_up(c);
				c->st.inline_send = lim.inline_send;
				c->st.inline_recv = lim.inline_recv;
				c->st.remote_invalidate = lim.remote_inv;
				RLOG_PEER(RPCRDMA_LOG_INFO, "clnt", &c->addr,
					  "connected: MPA rev %u, CRC %s, peer IRD %u ORD %u, "
					  "private data %u bytes, inline send %u recv %u, "
					  "remote invalidation %s",
					  ev.mpa_rev, ev.crc ? "on" : "off", ev.ird, ev.ord,
					  ev.private_data_len, lim.inline_send, lim.inline_recv,
					  lim.remote_inv ? "on" : "off");
				c->st.connections = 1;
				RPCRDMA_PROBE(conn_up, RPCRDMA_PROBE_CLIENT, gen, lim.inline_send,
					      lim.inline_recv, (uint32_t)lim.remote_inv);
				xprt_credits_reset(&c->cr);
				c->st.credits = c->cr.grant;
				/* RFC 8167 §6: re-enabled on every new connection. */
				if (c->bc) {
					lim.vers = c->lim.vers; /* may speak Version Two */
					bc_clnt_up(c->bc, ep, &lim, gen, gen != 0);
				}
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
		if (__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
			rc = -ECANCELED;
			goto fail;
		}
		rc = rpcrdma_dev_progress(c->dev, 20);
		if (rc < 0 && rc != -EINTR)
			goto fail;
		/* Completions of an older endpoint may still arrive. */
		drain_cq(c);
	}
fail:
	RLOG_PEER(RPCRDMA_LOG_ERR, "clnt", &c->addr, "connect failed: %s", rlog_errname(rc));
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
	RPCRDMA_PROBE(conn_down, RPCRDMA_PROBE_CLIENT, c->gen, c->cr.on_wire);
	c->gen++;
	c->nrpend = 0; /* the new connection posts every receive */
	c->st.conn_errors++;
	c->st.connections = 0;
	RLOG_PEER(RPCRDMA_LOG_ERR, "clnt", &c->addr, "connection lost");
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
	c->rr_held = 0; /* notifications' credits too (rr_pull.c) */
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

/* Leader, lock held, connection down: connect again, with a growing pause
 * between attempts, then retransmit. Drops the lock while connecting.
 * Stops when a waiting call reaches its deadline (that call fails with
 * -ETIMEDOUT, the connection stays down and attempts are counted on: the
 * next pass goes on for the calls still waiting), when no call waits any
 * more, or when the client is being destroyed. */
void clnt_reconnect(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	struct rpcrdma_ep *old = c->ep;
	uint32_t gen = c->gen, attempts = c->attempts;
	int rc = -ECONNRESET;
	bool expired = false;

	c->ep = NULL;
	futex_mutex_unlock(&c->lock);
	if (old) {
		rpcrdma_ep_destroy(old);
		drain_cq(c);
	}
	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) { /* unlocked: clnt_shutdown */
		rc = clnt_conn_open(c, gen);
		if (!rc)
			break;
		attempts++;
		futex_mutex_lock(&c->lock);
		c->attempts = attempts;
		/* An attempt cut short by a call's deadline says less than
		 * the failure before it. */
		if (rc != -ETIMEDOUT || !c->last_conn_err)
			c->last_conn_err = rc;
		futex_mutex_unlock(&c->lock);
		expired = clnt_deadline_passed(c, monotonic_ns()) ||
			  conn_backoff(c, conn_backoff_ns(c, attempts));
		if (expired || !conn_wanted(c))
			break;
	}
	futex_mutex_lock(&c->lock);
	if (!rc) {
		if (c->attempts)
			RLOG_PEER(RPCRDMA_LOG_INFO, "clnt", &c->addr,
				  "reconnected after %u failed attempts", c->attempts);
		else
			RLOG_PEER(RPCRDMA_LOG_INFO, "clnt", &c->addr, "reconnected");
		c->attempts = 0;
		c->last_conn_err = 0;
		c->state = C_UP;
		c->st.reconnects++;
		RPCRDMA_PROBE(reconnect, gen, attempts, c->st.reconnects);
		clnt_kick_tx(c, cbl);
	} else if (expired && !c->stop) {
		clnt_check_timeouts(c, cbl);
	}
}

/* Lock held: do calls that ended on the wire without a reply (timed out:
 * completed), and our transport properties unanswered by their deadline,
 * hold every credit in use while another call waits for a credit or a
 * slot? Their replies may never come (RFC 8166 §3.3.1 gives no other way
 * to get a credit back): the connection is then closed and made again.
 * Properties still within their deadline are not dead: a responder that
 * grants one credit answers them before the next call can go. A responder
 * silent to them by their deadline gets none on later connections. */
bool clnt_credits_held_by_dead(struct rpcrdma_clnt *c)
{
	uint64_t now = monotonic_ns();
	bool props_late = false;
	uint32_t n = 0;

	if (c->state != C_UP || !c->cr.on_wire)
		return false;
	if (!c->nslot_wait && !(c->txq_head && !xprt_credits_may_send(&c->cr)))
		return false;
	for (uint32_t i = 0; i < c->nslots; i++) {
		const struct clnt_slot *s = &c->slots[i];
		bool late = s->zombie && xprt_deadline_passed(s->deadline, now);

		if (!s->in_use || !s->on_wire)
			continue;
		props_late |= late;
		if (s->done || late)
			n++;
	}
	/* (credits held by notifications come back with replies to later
	 * calls, which cannot go either; held alone, they come back when
	 * their Sends complete, rr_pull.c) */
	if (!n || n + c->rr_held < c->cr.on_wire)
		return false;
	if (props_late)
		c->v2_props = false;
	return true;
}
