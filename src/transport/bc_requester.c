// SPDX-License-Identifier: MIT
/*
 * The server's reverse requester (RFC 8167): its handles for calling its
 * clients on the connections svc_conn.c owns. include/rpcrdma/backchannel.h
 * says what; transport/backchannel_hooks.h lists the hooks;
 * transport/backchannel.c has the wire rules, slots.c the reverse call
 * slots.
 *
 * A client handle (struct rpcrdma_svc_client) exists for every connection
 * from its accept on; BC_ENABLE names the client (64-bit id) and binds the
 * handle of that id to the connection, so after a reconnect the same
 * handle goes on with the new connection and its waiting calls are sent
 * again with the same XIDs (RFC 8167 §5.4). The reverse calls' slots, XIDs
 * and credit window are struct xprt_rslots (transport/backchannel.c); a
 * reply is matched by its XID there (xprt_rslots_find). Deadlines: every
 * call ends by its deadline, and a call waiting for its client to come
 * back waits conn_wait_ms at most. A thread runs a loop without a device
 * (evloop.h): asynchronous completions and events when woken, timeouts at
 * its tick.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/bc_requester.h"
#include "util/clock.h"
#include "util/probe.h"

uint32_t bc_svc_extra_recvs(const struct bc_svc *b)
{
	return b ? b->slots : 0;
}

static void post_event(struct bc_svc *b, struct rpcrdma_svc_client *cl, enum rpcrdma_bc_event ev)
{
	if (!b->cb || b->nev >= BC_MAX_EVENTS)
		return;
	b->ev[b->nev].cl = cl;
	b->ev[b->nev].ev = ev;
	b->nev++;
	futex_cond_broadcast(&b->cv);
}

static uint32_t slot_idx(struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	return (uint32_t)(s - cl->rs.slot);
}

/* Lock held: a slot whose owner is done and which is not on the wire is
 * free again. */
static void slot_maybe_free(struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	struct bc_scall *sc = &cl->sc[slot_idx(cl, s)];

	if (sc->released && s->state != XPRT_RS_WIRE) {
		if (s->call.mr_used)
			xprt_call_fence(&s->call, false, 0);
		s->state = XPRT_RS_FREE;
		futex_cond_broadcast(&cl->cv);
	}
}

/* Lock held: the call's status is final; tell its owner. */
static void slot_finish(struct rpcrdma_svc_client *cl, struct xprt_rslot *s, int status)
{
	struct bc_scall *sc = &cl->sc[slot_idx(cl, s)];

	if (sc->fin)
		return;
	/* No chunk memory stays exposed once the caller may reuse it. */
	if (s->call.mr_used)
		xprt_call_fence(&s->call, false, 0);
	sc->fin = true;
	s->status = status;
	if (status == -ETIMEDOUT)
		cl->st.timeouts++;
	xprt_slot_final(&s->call, &s->result, status);
	if (s->state != XPRT_RS_WIRE)
		s->state = XPRT_RS_DONE;
	/* A timed-out call still on the wire keeps its credit until its reply
	 * or the connection goes (a zombie, as requester.c does). */
	futex_cond_broadcast(&cl->cv);
	if (sc->async) {
		if (cl->b->inline_cb)
			__atomic_add_fetch(&cl->b->inline_pending, 1, __ATOMIC_RELEASE);
		else
			futex_cond_broadcast(&cl->b->cv);
	}
}

static void slot_release(struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	cl->sc[slot_idx(cl, s)].released = true;
	slot_maybe_free(cl, s);
}

/* Lock held: send waiting calls, oldest first, as the reverse window and
 * the connection allow (RFC 8167 §4.1). */
static void cl_kick(struct rpcrdma_svc_client *cl)
{
	struct bc_svc *b = cl->b;

	while (cl->enabled && cl->conn && cl->conn->up && xprt_credits_may_send(&cl->rs.cr)) {
		struct xprt_rslot *s = xprt_rslots_oldest(&cl->rs);
		struct xprt_call *k;
		int rc;

		if (!s)
			return;
		k = &s->call;
		rc = xprt_rslot_marshal(&cl->rs, s, &cl->conn->lim, b->chunks);
		if (!rc) {
			struct rpcrdma_send_wr wr = {
			    .wr_id = bc_wrid(0, BC_OP_SEND, slot_idx(cl, s)),
			    .opcode = RPCRDMA_WR_SEND,
			    .flags = RPCRDMA_SEND_SIGNALED,
			    .sg = k->sge,
			    .num_sge = k->nsge,
			};

			rc = rpcrdma_post_send(cl->conn->ep, &wr);
		}
		if (rc) {
			s->state = XPRT_RS_DONE;
			slot_finish(cl, s, rc);
			slot_maybe_free(cl, s);
			continue;
		}
		RPCRDMA_PROBE(bc_call_send, k->xid, k->call_proc, k->nread, k->nwrite,
			      k->reply_offered, k->hdr_len, k->msg_len);
		s->state = XPRT_RS_WIRE;
		s->wait_dl = 0;
		s->conn_gen = cl->conn_gen;
		/* No Write chunks in the reverse direction: write_chunks
		 * stays 0 (xprt_rslot_marshal). */
		if (xprt_slot_sent(&s->result, k))
			cl->st.retransmits++;
		cl->st.calls_sent++;
		XPRT_COUNT_SENT(cl->st, &cl->rs.cr, k);
	}
}

static struct rpcrdma_svc_client *client_new(struct bc_svc *b)
{
	struct rpcrdma_svc_client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->b = b;
	futex_cond_init(&cl->cv);
	cl->next = b->clients;
	b->clients = cl;
	return cl;
}

void bc_svc_conn_v2(struct bc_conn *bc, const struct xprt_limits *lim)
{
	/* Reverse calls go in the version the client speaks (draft §5), with
	 * the thresholds of the connection: Version Two's 4096 bytes without
	 * private data (draft §2.3), the transport properties. A call already
	 * marshalled keeps its (smaller) sizes, still valid: they only grow. */
	bc->lim.vers = RPCRDMA2_VERSION;
	bc->lim.inline_send = lim->inline_send;
	bc->lim.inline_recv = lim->inline_recv;
}

struct bc_conn *bc_svc_conn_new(struct bc_svc *b, struct rpcrdma_ep *ep,
				const struct xprt_limits *lim)
{
	struct bc_conn *bc = calloc(1, sizeof(*bc));

	if (!bc)
		return NULL;
	bc->b = b;
	bc->ep = ep;
	bc->lim = *lim;
	bc->up = true;
	/* Until BC_ENABLE names the client, it is an anonymous one whose
	 * gate is closed (RFC 8167 §6). */
	bc->cl = client_new(b);
	if (!bc->cl) {
		free(bc);
		return NULL;
	}
	bc->cl->conn = bc;
	return bc;
}

/* Lock held: @cl lost its connection. */
static void cl_unbind(struct rpcrdma_svc_client *cl)
{
	uint64_t now = monotonic_ns();

	if (cl->enabled)
		post_event(cl->b, cl, RPCRDMA_BC_EV_DOWN);
	cl->enabled = false;
	cl->conn = NULL;
	cl->st.enabled = 0;
	cl->st.connected = 0;
	if (!cl->rs_ready)
		return;
	/* RFC 8167 §5.4: calls on the wire wait for the client to come back,
	 * then go again with the same XID; each waits at most conn_wait_ms. */
	for (uint32_t i = 0; i < cl->rs.n; i++) {
		struct xprt_rslot *s = &cl->rs.slot[i];

		if (s->state == XPRT_RS_WAIT && !s->wait_dl)
			s->wait_dl = xprt_deadline_at(now, cl->b->conn_wait_ms);
		if (s->state != XPRT_RS_WIRE)
			continue;
		if (s->call.mr_used)
			xprt_call_fence(&s->call, false, 0);
		if (cl->sc[i].fin) {
			s->state = XPRT_RS_DONE;
			slot_maybe_free(cl, s);
		} else {
			s->state = XPRT_RS_WAIT;
			s->wait_dl = xprt_deadline_at(now, cl->b->conn_wait_ms);
		}
	}
	xprt_credits_reset(&cl->rs.cr);
	cl->st.outstanding = 0;
}

void bc_svc_conn_down(struct bc_conn *bc)
{
	if (!bc || !bc->up)
		return;
	bc->up = false;
	if (bc->cl && bc->cl->conn == bc)
		cl_unbind(bc->cl);
}

void bc_svc_conn_free(struct bc_conn *bc)
{
	if (!bc)
		return;
	bc_svc_conn_down(bc);
	if (bc->cl && bc->cl->conn == bc)
		bc->cl->conn = NULL;
	free(bc);
}

/* Lock held: open the gate of the client on @bc (RFC 8167 §6). With an
 * id, the client handle that already carries it (an earlier connection of
 * the same client) takes over this connection. */
int bc_svc_cl_enable(struct bc_conn *bc, bool has_id, uint64_t id, uint32_t credits)
{
	struct bc_svc *b = bc->b;
	struct rpcrdma_svc_client *cl = bc->cl;
	int rc;

	if (!bc->up)
		return -ENOTCONN;
	if (has_id && !(cl->has_id && cl->id == id)) {
		struct rpcrdma_svc_client *o;

		for (o = b->clients; o; o = o->next)
			if (o != cl && o->has_id && o->id == id)
				break;
		if (o) {
			/* The same client again (a reconnect). The anonymous
			 * handle stays, unbound and closed. */
			if (o->conn && o->conn != bc)
				cl_unbind(o);
			if (cl->conn == bc)
				cl->conn = NULL;
			cl = o;
		} else {
			cl->id = id;
			cl->has_id = true;
		}
	}
	if (!cl->rs_ready) {
		rc = xprt_rslots_init(&cl->rs, b->pd, b->slots, b->inline_send);
		if (rc)
			return rc;
		cl->sc = calloc(b->slots, sizeof(*cl->sc));
		if (!cl->sc) {
			xprt_rslots_fini(&cl->rs);
			return -ENOMEM;
		}
		cl->rs_ready = true;
	}
	if (cl->conn != bc) {
		cl->conn = bc;
		cl->conn_gen++;
		xprt_credits_reset(&cl->rs.cr);
	}
	bc->cl = cl;
	cl->peer_credits = credits;
	cl->enabled = cl->ever_enabled = true;
	cl->st.enabled = 1;
	cl->st.connected = 1;
	cl->st.enables++;
	cl->st.credits = cl->rs.cr.grant;
	post_event(b, cl, RPCRDMA_BC_EV_ENABLED);
	/* Calls that waited for this connection go now (same XIDs). */
	cl_kick(cl);
	return 0;
}

bool bc_svc_recv(struct bc_conn *bc, const uint8_t *buf, size_t len)
{
	struct bc_svc *b = bc->b;
	struct rpcrdma1_hdr *h = &b->scratch;
	struct rpcrdma_svc_client *cl = bc->cl;
	struct xprt_rslot *s;
	bool decoded;
	enum xprt_dir dir = xprt_msg_direction(buf, len, h, &decoded);
	int st;

	/* Version Two once the client spoke it (bc_svc_conn_v2): reverse
	 * replies and errors come in it. */
	if (dir == XPRT_DIR_NONE && !decoded && bc->lim.vers == RPCRDMA2_VERSION)
		dir = xprt_v2_msg_direction(buf, len, h, &decoded);

	if (dir == XPRT_DIR_CALL)
		return false; /* forward traffic */
	if (dir == XPRT_DIR_NONE) {
		/* Only an RDMA_ERROR can answer one of our reverse calls; its
		 * direction is not in the message, so its credit value is
		 * ignored (RFC 8167 §4.1). Anything else goes to svc_conn.c. */
		if (!decoded && rpcrdma1_decode_buf(buf, len, h))
			return false;
		if (h->proc != RPCRDMA1_ERROR || !cl || !cl->rs_ready)
			return false;
		s = xprt_rslots_find(&cl->rs, h->xid);
		if (!s)
			return false;
		cl->st.credits_ignored++;
		cl->st.inline_bytes_rx += len;
		RPCRDMA_PROBE(error_recv, RPCRDMA_PROBE_SERVER, h->xid, h->err, h->vers);
		if (h->err == RPCRDMA1_ERR_CHUNK)
			cl->st.err_chunk_rx++;
		s->result.rdma_err = h->err;
		s->result.reply_proc = RPCRDMA1_ERROR;
		if (h->err == RPCRDMA1_ERR_VERS) {
			s->result.mismatch_low = h->vers_low;
			s->result.mismatch_high = h->vers_high;
		}
		st = xprt_rdma_err_status(h->err);
		goto done;
	}
	/* A reverse Reply (RFC 8167 §5.2). */
	if (!decoded && rpcrdma1_decode_buf(buf, len, h)) {
		if (cl)
			cl->st.unmatched++;
		return true;
	}
	s = cl && cl->rs_ready ? xprt_rslots_find(&cl->rs, h->xid) : NULL;
	if (!s) {
		if (cl)
			cl->st.unmatched++;
		return true;
	}
	/* RFC 8167 §4.1: its rdma_credit is the client's reverse grant. */
	xprt_credits_update(&cl->rs.cr, h->credit);
	cl->st.credits = cl->rs.cr.grant;
	RPCRDMA_PROBE(credits, RPCRDMA_PROBE_REVERSE, cl->rs.cr.grant, cl->rs.cr.on_wire);
	cl->st.inline_bytes_rx += len;
	if (cl->sc[slot_idx(cl, s)].fin) {
		/* Its caller gave up (timeout): the credit comes back now. */
		cl->st.unmatched++;
		xprt_credits_done(&cl->rs.cr);
		s->state = XPRT_RS_DONE;
		slot_maybe_free(cl, s);
		cl_kick(cl);
		return true;
	}
	if (s->call.mr_used)
		xprt_call_fence(&s->call, false, 0);
	st = xprt_reply_process(&s->call, buf, len, h, &s->result);
	if (h->proc == RPCRDMA1_NOMSG) {
		uint64_t w = 0;

		cl->st.long_replies++;
		if (!rpcrdma1_reply_chunk_length(&h->chunks, &w))
			cl->st.reply_bytes += w;
	}
done:
	RPCRDMA_PROBE(bc_reply_recv, h->xid, h->proc, cl->rs.cr.grant, st);
	cl->st.replies++;
	xprt_credits_done(&cl->rs.cr);
	cl->st.outstanding = cl->rs.cr.on_wire;
	s->state = XPRT_RS_DONE;
	slot_finish(cl, s, st);
	slot_maybe_free(cl, s);
	cl_kick(cl);
	return true;
}

/* Lock held: fail calls past their deadlines. */
static void check_timeouts(struct bc_svc *b)
{
	uint64_t now = monotonic_ns();

	for (struct rpcrdma_svc_client *cl = b->clients; cl; cl = cl->next) {
		if (!cl->rs_ready)
			continue;
		for (uint32_t i = 0; i < cl->rs.n; i++) {
			struct xprt_rslot *s = &cl->rs.slot[i];

			if (s->state == XPRT_RS_FREE || cl->sc[i].fin)
				continue;
			if (xprt_deadline_passed(s->deadline, now) ||
			    (s->state == XPRT_RS_WAIT && xprt_deadline_passed(s->wait_dl, now)))
				slot_finish(cl, s, -ETIMEDOUT);
		}
	}
}

/* Lock held: one finished async call whose callback has not run, or NULL. */
static struct xprt_rslot *next_async(struct bc_svc *b, struct rpcrdma_svc_client **pcl)
{
	for (struct rpcrdma_svc_client *cl = b->clients; cl; cl = cl->next) {
		if (!cl->rs_ready)
			continue;
		for (uint32_t i = 0; i < cl->rs.n; i++) {
			struct bc_scall *sc = &cl->sc[i];

			if (sc->async && sc->fin && !sc->released && !sc->cb_taken) {
				*pcl = cl;
				return &cl->rs.slot[i];
			}
		}
	}
	return NULL;
}

/* Lock held (dropped around the callback): run the callback of the
 * finished asynchronous call in slot @s of @cl. */
static void run_async(struct bc_svc *b, struct rpcrdma_svc_client *cl, struct xprt_rslot *s)
{
	struct bc_scall *sc = &cl->sc[slot_idx(cl, s)];
	rpcrdma_svc_client_cb_t cb = sc->cb;
	void *cb_arg = sc->cb_arg, *res = s->call.res;
	int status = s->status;

	sc->cb_taken = true;
	/* The slot is given back before the callback runs, so the callback
	 * may start the next call. */
	slot_release(cl, s);
	futex_mutex_unlock(b->lock);
	if (cb)
		cb(cl, status, res, cb_arg);
	futex_mutex_lock(b->lock);
}

/* How often the thread looks at the deadlines. */
#define BC_SVC_TICK_NS 5000000ull

/* evloop end of iteration, lock held (dropped around the callbacks): the
 * events, then the asynchronous completions not run inline. */
static void svc_loop_after(struct evloop *l)
{
	struct bc_svc *b = l->ctx;
	struct rpcrdma_svc_client *cl;
	struct xprt_rslot *s;

	while (b->nev) {
		struct rpcrdma_svc_client *ecl = b->ev[0].cl;
		enum rpcrdma_bc_event ev = b->ev[0].ev;

		memmove(&b->ev[0], &b->ev[1], (b->nev - 1) * sizeof(b->ev[0]));
		b->nev--;
		futex_mutex_unlock(b->lock);
		b->cb(ecl, ev, b->ctx);
		futex_mutex_lock(b->lock);
	}
	while ((!b->inline_cb || b->stop) && (s = next_async(b, &cl)) != NULL)
		run_async(b, cl, s);
}

/* evloop tick, lock held. */
static void svc_loop_tick(struct evloop *l)
{
	check_timeouts(l->ctx);
}

static const struct evloop_ops svc_loop_ops = {
    .tick = svc_loop_tick,
    .after = svc_loop_after,
};

static void *svc_thread(void *arg)
{
	struct bc_svc *b = arg;

	evloop_run(&b->loop);
	return NULL;
}

int bc_svc_start(struct bc_svc *b)
{
	int rc;

	evloop_init(&b->loop, NULL, NULL, 0, false, 0, BC_SVC_TICK_NS, b->lock, &b->cv,
		    &svc_loop_ops, b);
	rc = -pthread_create(&b->thr, NULL, svc_thread, b);
	b->thr_started = rc == 0;
	return rc;
}

void bc_svc_run_inline(struct bc_svc *b)
{
	struct rpcrdma_svc_client *cl;
	struct xprt_rslot *s;

	if (!b || !__atomic_load_n(&b->inline_pending, __ATOMIC_ACQUIRE))
		return;
	futex_mutex_lock(b->lock);
	__atomic_store_n(&b->inline_pending, 0, __ATOMIC_RELAXED);
	while (!b->stop && (s = next_async(b, &cl)) != NULL)
		run_async(b, cl, s);
	futex_mutex_unlock(b->lock);
}

void bc_svc_stop(struct bc_svc *b)
{
	if (!b)
		return;
	futex_mutex_lock(b->lock);
	b->stop = true;
	for (struct rpcrdma_svc_client *cl = b->clients; cl; cl = cl->next) {
		if (!cl->rs_ready)
			continue;
		for (uint32_t i = 0; i < cl->rs.n; i++)
			if (cl->rs.slot[i].state != XPRT_RS_FREE)
				slot_finish(cl, &cl->rs.slot[i], -ECANCELED);
	}
	evloop_stop(&b->loop); /* after the last async completions */
	futex_mutex_unlock(b->lock);
	if (b->thr_started) {
		pthread_join(b->thr, NULL);
		b->thr_started = false;
	}
}

void bc_svc_free(struct bc_svc *b)
{
	if (!b)
		return;
	bc_svc_stop(b);
	while (b->clients) {
		struct rpcrdma_svc_client *cl = b->clients;

		b->clients = cl->next;
		if (cl->rs_ready)
			xprt_rslots_fini(&cl->rs);
		free(cl->sc);
		free(cl);
	}
	free(b);
}

int bc_svc_client_call(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers, uint32_t proc,
		       xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
		       const struct rpcrdma_call_opts *opts, bool async, rpcrdma_svc_client_cb_t cb,
		       void *cb_arg)
{
	struct bc_svc *b;
	struct xprt_rslot *s;
	struct bc_scall *sc;
	uint32_t tmo;
	int rc;

	if (!cl)
		return -EINVAL;
	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_AUTH) &&
	    rpcrdma_rpc_check_cred_verf(opts->auth, opts->auth_len))
		return -EINVAL;
	b = cl->b;
	tmo =
	    opts && (opts->comp_mask & RPCRDMA_CALL_OPT_TIMEOUT) ? opts->timeout_ms : b->timeout_ms;
	futex_mutex_lock(b->lock);
	for (;;) {
		if (b->stop) {
			futex_mutex_unlock(b->lock);
			return -ECANCELED;
		}
		/* RFC 8167 §6: nothing goes to a client that has not said it
		 * takes reverse calls; refused here, nothing is sent. */
		if (!cl->ever_enabled || !cl->rs_ready) {
			cl->st.gate_refusals++;
			futex_mutex_unlock(b->lock);
			return -ENOPROTOOPT;
		}
		s = xprt_rslots_get(&cl->rs);
		if (s)
			break;
		futex_cond_wait(&cl->cv, b->lock);
	}
	sc = &cl->sc[slot_idx(cl, s)];
	memset(sc, 0, sizeof(*sc));
	sc->async = async;
	sc->cb = cb;
	sc->cb_arg = cb_arg;
	xprt_slot_start(&s->call, prog, vers, proc, xargs, args, xres, res);
	if (opts)
		s->call.opts = *opts;
	else
		memset(&s->call.opts, 0, sizeof(s->call.opts));
	/* The call's credential (RPCRDMA_CALL_OPT_AUTH), else AUTH_NONE: a
	 * slot keeps no credential of an earlier call. Linux's NFSv4.1
	 * callback service refuses every CB_COMPOUND sent with AUTH_NONE. */
	s->call.auth = NULL;
	s->call.auth_len = 0;
	if (opts && (opts->comp_mask & RPCRDMA_CALL_OPT_AUTH)) {
		s->call.auth = opts->auth;
		s->call.auth_len = opts->auth_len;
	}
	s->deadline = xprt_deadline_at(monotonic_ns(), tmo);
	if (!cl->enabled)
		s->wait_dl = xprt_deadline_at(monotonic_ns(), b->conn_wait_ms);
	s->state = XPRT_RS_WAIT;
	cl->st.calls++;
	cl_kick(cl);
	if (s->state == XPRT_RS_WAIT && !sc->fin)
		cl->st.credit_stalls++; /* waits for a reverse credit or a connection */
	if (async) {
		futex_mutex_unlock(b->lock);
		return 0;
	}
	while (!sc->fin)
		futex_cond_wait(&cl->cv, b->lock);
	rc = s->status;
	slot_release(cl, s);
	futex_mutex_unlock(b->lock);
	return rc;
}

void bc_svc_client_stats(struct rpcrdma_svc_client *cl, struct rpcrdma_bc_stats *st)
{
	*st = cl->st;
	st->credits = cl->rs_ready ? cl->rs.cr.grant : 0;
	st->peer_credits = cl->peer_credits;
	st->outstanding = cl->rs_ready ? cl->rs.cr.on_wire : 0;
	st->enabled = cl->enabled;
	st->connected = cl->conn && cl->conn->up;
}

#ifdef RPCRDMA_TEST_HOOKS
void bc_test_set_next_xid(struct rpcrdma_svc_client *cl, uint32_t xid)
{
	futex_mutex_lock(cl->b->lock);
	cl->rs.next_xid = xid;
	futex_mutex_unlock(cl->b->lock);
}
#endif
