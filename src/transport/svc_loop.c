// SPDX-License-Identifier: MIT
/*
 * The server's threads: the progress thread runs the server's event loop
 * (evloop.h): it drives the device, reaps completions (svc_conn.c) and
 * runs complete calls itself (workers == 0) or hands them to the worker
 * threads; dispatch decodes a call's RPC
 * header and runs the registered program. Replies are held on the
 * progress thread and leave together at the end of its batch (reply.c).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "rpcrdma/tirpc.h"
#include "transport/backchannel_hooks.h"
#include "transport/ccp.h"
#include "transport/responder.h"
#include "util/clock.h"

/* Dispatch (worker or progress thread, no lock): decode the RPC call
 * header (RFC 5531), check it, and run the program it names. */
static void process(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r)
{
	struct rpcrdma_rpc_reply rep;
	const struct svc_prog *p = NULL;
	uint32_t low = UINT32_MAX, high = 0;
	bool prog_known = false;
	size_t mlen;
	const uint8_t *msg = svc_call_cursor(r, &mlen);
	bool short_call = xprt_short_call_parse(msg, mlen, &r->call);

	if (short_call) {
		/* AUTH_NONE call header read word by word (short.c). */
		rpcrdma_xdr_setpos(&r->cur, XPRT_SHORT_CALL);
	} else if (rpcrdma_rpc_decode_call(&r->cur, &r->call)) {
		/* RFC 5531 §9: an opaque_auth body over 400 bytes is a bad
		 * credential (verifier), answered AUTH_ERROR (rpc_auth.c). */
		if (rpcrdma_rpc_oversize_auth(&r->cur, &rep) == 1) {
			svc_reply_msg(r, &rep, NULL, NULL);
			return;
		}
		/* Not an RPC call we can parse: dropped (as Linux does). */
		futex_mutex_lock(&s->lock);
		s->st.decode_errors++;
		svc_req_end(r, true);
		futex_mutex_unlock(&s->lock);
		return;
	}
	__atomic_fetch_add(&s->ncalls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->conn->cst.calls, 1, __ATOMIC_RELAXED);
	/* A short call passed rpcrdma_rpc_check_call()'s tests already:
	 * rpcvers 2, AUTH_NONE credential and verifier, both empty. */
	if (!short_call &&
	    rpcrdma_rpc_check_call(&r->call, RPCRDMA_RPC_FLAVORS_DEFAULT, &rep) == 1) {
		svc_reply_msg(r, &rep, NULL, NULL);
		return;
	}
	for (uint32_t i = 0; i < s->nprogs; i++) {
		if (s->progs[i].prog != r->call.prog)
			continue;
		prog_known = true;
		if (s->progs[i].vers < low)
			low = s->progs[i].vers;
		if (s->progs[i].vers > high)
			high = s->progs[i].vers;
		if (s->progs[i].vers == r->call.vers)
			p = &s->progs[i];
	}
	/* The Connection Configuration Protocol (ccp_svc.c): after the
	 * registered programs, so that they pay nothing for it. */
	if (!prog_known && (p = svc_ccp_prog(s, r->call.prog)) != NULL) {
		prog_known = true;
		low = high = p->vers;
		if (p->vers != r->call.vers)
			p = NULL;
	}
	if (!p) {
		if (prog_known)
			rpcrdma_rpc_reply_prog_mismatch(&rep, r->call.xid, low, high);
		else
			rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_PROG_UNAVAIL);
		svc_reply_msg(r, &rep, NULL, NULL);
		return;
	}
	/* A retransmission answered or parked by the cache (svc_drc.c). */
	if (s->drc && svc_drc_admit(s, r, msg, mlen))
		return;
	rpcrdma_tirpc_xdr_create(&r->xdrs, &r->cur);
	xprt_ddp_init(&r->ddp, XPRT_DDP_SVC_DEC);
	xprt_ddp_attach(&r->xdrs, &r->ddp);
	if (p->fn)
		p->fn(r, r->call.proc, &r->xdrs, p->ctx);
	else
		s->tirpc_run(r, p->tfn);
}

static void *worker_main(void *arg)
{
	struct rpcrdma_svc *s = arg;

	futex_mutex_lock(&s->lock);
	for (;;) {
		while (!s->qhead && !s->stop)
			futex_cond_wait(&s->work_cv, &s->lock);
		if (s->stop && !s->qhead)
			break;
		struct rpcrdma_svc_req *r = s->qhead;

		s->qhead = r->next;
		if (!s->qhead)
			s->qtail = NULL;
		futex_mutex_unlock(&s->lock);
		process(s, r);
		futex_mutex_lock(&s->lock);
	}
	futex_mutex_unlock(&s->lock);
	return NULL;
}

/* Replies are held for the rest of a batch only while that is short: a
 * handler that computes for long (a checksum over a 1 MiB payload) must not
 * delay the replies of the calls answered before it. */
#define SVC_HOLD_NS 20000u

static void process_batched(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r, bool last)
{
	/* The last call of a batch sends its reply at once (with the held
	 * ones before it, in order): nothing follows to share a transmit. */
	s->batch_last = last;
	process(s, r);
	s->batch_last = false;
	if (s->nheld && monotonic_ns() - s->held_since >= SVC_HOLD_NS)
		svc_flush_held(s);
}

static void run_list(struct rpcrdma_svc *s, struct rpcrdma_svc_req *list)
{
	/* The list was built newest first; run oldest first. */
	struct rpcrdma_svc_req *rev = NULL;

	while (list) {
		struct rpcrdma_svc_req *n = list->next;

		list->next = rev;
		rev = list;
		list = n;
	}
	while (rev) {
		struct rpcrdma_svc_req *n = rev->next;

		/* qhead: only this thread queues there when workers == 0 */
		process_batched(s, rev, !n && (s->workers || !s->qhead));
		rev = n;
	}
}

/* Progress thread: busy-poll this long after the last activity before
 * blocking on the device fd (back-to-back calls then cost no wakeup). */
#define SVC_SPIN_NS  50000u
#define SVC_BLOCK_MS 20
/* How often events are looked at without progress saying so, and dead
 * connections reaped. */
#define SVC_TICK_NS 5000000ull

/* The CQ the loop reaps with progress: the shared one, or the first
 * connection's (the list of connections changes only on the progress
 * thread). Lock held. */
static void loop_set_cq(struct rpcrdma_svc *s)
{
	s->loop.cq = s->scq ? s->scq : s->conns ? s->conns->cq : NULL;
}

/* evloop step 2, progress thread: handle the completions that came with
 * progress, reap the rest (the shared CQ, or every connection's) and, when
 * progress counted more than completions, the connection events.
 * Complete calls go to s->runnow. The shared CQ is polled again only when
 * progress made more than it handed over (@n > @m) or a full batch (more
 * may wait): otherwise this round's completions all came with it, and
 * those pushed outside progress (Send completions of posts, flushes) are
 * taken by the next progress round that makes anything or by the CQ poll
 * after every wait (evloop_poll()), as before. */
static bool loop_reap(struct evloop *l, int n, struct rpcrdma_wc *wc, int m)
{
	struct rpcrdma_svc *s = l->ctx;

	futex_mutex_lock(&s->lock);
	for (int i = 0; i < m; i++)
		svc_conn_wc(svc_wc_conn(&wc[i]), &wc[i], &s->runnow);
	if (s->scq && s->conns) {
		if (n > m || m == EVLOOP_WC)
			m += svc_conn_poll(s->conns, &s->runnow);
	} else {
		for (struct svc_conn *c = s->conns; c; c = c->next)
			m += svc_conn_poll(c, &s->runnow);
	}
	/* progress counts completions and events */
	if (n > m)
		svc_conn_events(s, &s->runnow);
	loop_set_cq(s);
	futex_mutex_unlock(&s->lock);
	return n > 0 || s->runnow;
}

/* evloop tick: connection events now and then, and dead connections. Out
 * of line (its own function: bench/rpc's instruction count leaves it out,
 * as work of the clock, not of calls). */
__attribute__((noinline)) static void loop_tick(struct evloop *l)
{
	struct rpcrdma_svc *s = l->ctx;

	futex_mutex_lock(&s->lock);
	svc_conn_events(s, &s->runnow);
	svc_rr_tick(s);
	svc_pull_tick(s);
	svc_conn_reap(s);
	loop_set_cq(s);
	futex_mutex_unlock(&s->lock);
	EVLOOP_NO_TAIL_CALL();
}

/* evloop end of iteration: run the calls that became ready and the ones
 * queued while dispatching on this thread, then send the held replies. */
static void loop_dispatch(struct evloop *l)
{
	struct rpcrdma_svc *s = l->ctx;
	struct rpcrdma_svc_req *runnow = s->runnow;

	s->runnow = NULL;
	if (runnow)
		run_list(s, runnow);
	bc_svc_run_inline(s->bc); /* RPCRDMA_BC_OPT_INLINE completions */
	if (s->workers == 0 && s->qhead) {
		futex_mutex_lock(&s->lock);
		struct rpcrdma_svc_req *q = s->qhead;

		s->qhead = s->qtail = NULL;
		futex_mutex_unlock(&s->lock);
		while (q) {
			struct rpcrdma_svc_req *nx = q->next;

			process_batched(s, q, !nx);
			q = nx;
		}
	}
	/* End of the batch: the held replies leave, one transmit per
	 * connection (calls that arrived together are answered together). */
	if (s->nheld)
		svc_flush_held(s);
}

static uint64_t loop_bytes(struct evloop *l)
{
	return svc_conn_bytes(l->ctx);
}

static const struct evloop_ops svc_loop_ops = {
    .reap = loop_reap,
    .tick = loop_tick,
    .after = loop_dispatch,
    .bytes = loop_bytes,
};

/* The progress thread runs the server's loop: evloop_run() with the
 * server's steps called directly (they inline into the loop). */
static void *progress_main(void *arg)
{
	struct rpcrdma_svc *s = arg;

	if (s->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	evloop_begin(&s->loop);
	while (!__atomic_load_n(&s->loop.stop, __ATOMIC_ACQUIRE))
		evloop_iterate(&s->loop, loop_reap, loop_tick, loop_dispatch);
	return NULL;
}

int svc_loop_start(struct rpcrdma_svc *s)
{
	int rc;

	if (s->workers) {
		s->wthr = calloc(s->workers, sizeof(*s->wthr));
		if (!s->wthr)
			return -ENOMEM;
		for (; s->nwthr < s->workers; s->nwthr++) {
			rc = pthread_create(&s->wthr[s->nwthr], NULL, worker_main, s);
			if (rc)
				return -rc;
		}
	}
	evloop_init(&s->loop, s->dev, NULL, s->progress == RPCRDMA_PROGRESS_BLOCK ? 0 : SVC_SPIN_NS,
		    s->progress == RPCRDMA_PROGRESS_BUSY_POLL, SVC_BLOCK_MS, SVC_TICK_NS, &s->lock,
		    NULL, &svc_loop_ops, s);
	/* pthr and started are read under the lock (svc_on_progress_thread):
	 * by the workers, already running, and by the progress thread, which
	 * may run before pthread_create has stored pthr (a data race under
	 * ThreadSanitizer before, issue 37). */
	futex_mutex_lock(&s->lock);
	loop_set_cq(s);
	rc = pthread_create(&s->pthr, NULL, progress_main, s);
	if (!rc)
		s->started = true;
	futex_mutex_unlock(&s->lock);
	return -rc;
}

int svc_loop_stop(struct rpcrdma_svc *s, int timeout_ms)
{
	struct timespec dl;
	int rc = 0;

	futex_mutex_lock(&s->lock);
	if (s->stopped || !s->started) {
		futex_mutex_unlock(&s->lock);
		return 0;
	}
	s->stopping = true;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	/* Let dispatched calls be answered. */
	for (;;) {
		uint32_t held = 0;

		for (struct svc_conn *c = s->conns; c; c = c->next)
			held += c->held;
		if (!held)
			break;
		if (svc_done_wait(s, &dl) == ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	for (struct svc_conn *c = s->conns; c; c = c->next)
		if (!c->dead)
			rpcrdma_disconnect(c->ep);
	futex_mutex_unlock(&s->lock);
	/* Give the progress thread a moment to send what was posted. */
	usleep(20000);
	futex_mutex_lock(&s->lock);
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	evloop_stop(&s->loop);
	s->stopped = true;
	futex_cond_broadcast(&s->work_cv);
	futex_mutex_unlock(&s->lock);
	pthread_join(s->pthr, NULL);
	for (uint32_t i = 0; i < s->nwthr; i++)
		pthread_join(s->wthr[i], NULL);
	return rc;
}
