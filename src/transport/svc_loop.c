// SPDX-License-Identifier: MIT
/*
 * The server's threads: the progress thread drives the device, reaps
 * completions (svc_conn.c) and runs complete calls itself (workers == 0)
 * or hands them to the worker threads; dispatch decodes a call's RPC
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

	if (xprt_short_call_parse(msg, mlen, &r->call)) {
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
	if (rpcrdma_rpc_check_call(&r->call, RPCRDMA_RPC_FLAVORS_DEFAULT, &rep) == 1) {
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
	if (!p) {
		if (prog_known)
			rpcrdma_rpc_reply_prog_mismatch(&rep, r->call.xid, low, high);
		else
			rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_PROG_UNAVAIL);
		svc_reply_msg(r, &rep, NULL, NULL);
		return;
	}
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

/* The progress thread's spin state (transport/spin.c has the policy). */
struct loop {
	struct xprt_spin sp;
	uint64_t spin_end, next_reap, budget, bytes;
	uint64_t blocked_at; /* when the loop started blocking, 0: not blocked */
	uint32_t idle, quiet;
	bool spinning;
};

/* The spin budget ran out: no completion, but bytes may be moving (a large
 * chunk being pulled or written), which counts as activity too. */
static void loop_spin_check(struct rpcrdma_svc *s, struct loop *l, uint64_t t)
{
	uint64_t b;

	if (!l->spinning || t < l->spin_end)
		return;
	b = svc_conn_bytes(s);
	if (b != l->bytes) {
		l->bytes = b;
		l->spin_end = t + l->budget;
	} else {
		xprt_spin_result(&l->sp, false);
		l->spinning = false;
	}
}

/* Drive the device (blocking up to @tmo ms) and handle what it produced:
 * completions, connection events, and now and then the reaping of dead
 * connections. Complete calls go to @runnow. Returns what progress
 * counted (completions and events). */
static int loop_progress(struct rpcrdma_svc *s, struct loop *l, uint64_t t, int tmo,
			 struct rpcrdma_svc_req **runnow)
{
	/* The first connection's completions made in this progress round
	 * come back with it (one provider lock round); the list of
	 * connections changes only on this thread. */
	struct svc_conn *c0 = s->conns;
	struct rpcrdma_wc wc0[32];
	int m = 0;
	int n = c0 ? rpcrdma_dev_progress_poll(s->dev, tmo, c0->cq, wc0, 32, &m)
		   : rpcrdma_dev_progress(s->dev, tmo);

	/* An idle spin iteration (progress produced nothing) looks at the
	 * CQs only every 16th time: what appears there without progress are
	 * completions of posts (Sends that TCP took at once), which only
	 * free send buffers. */
	if (n == 0 && tmo == 0 && (++l->quiet & 15) != 0)
		return n;
	futex_mutex_lock(&s->lock);
	for (int i = 0; i < m; i++)
		svc_conn_wc(c0, &wc0[i], runnow);
	for (struct svc_conn *c = s->conns; c; c = c->next)
		m += svc_conn_poll(c, runnow);
	/* progress counts completions and events: look for events only when
	 * it produced more than the completions just reaped (or now and
	 * then). */
	if (n > m || t >= l->next_reap)
		svc_conn_events(s, runnow);
	if (t >= l->next_reap) {
		svc_conn_reap(s);
		l->next_reap = t + 5000000ull;
	}
	futex_mutex_unlock(&s->lock);
	return n;
}

/* Spin accounting after a progress round (@active: it produced work). */
static void loop_account(struct loop *l, uint64_t t, int tmo, bool active)
{
	if (active) {
		/* A spin that saw it paid off; spin again after handling it. */
		if (l->spinning && tmo == 0)
			xprt_spin_result(&l->sp, true);
		if (l->blocked_at)
			xprt_spin_woke(&l->sp, monotonic_ns() - l->blocked_at);
		l->blocked_at = 0;
	} else if (tmo == 0 && l->budget > SVC_SPIN_NS && t < l->spin_end &&
		   l->spin_end - t < l->budget - SVC_SPIN_NS && (++l->idle & 3) == 0) {
		/* spun past the base budget: let a peer on this CPU run */
		xprt_spin_idle(&l->sp);
	}
}

/* Run the calls that became ready (@runnow) and the ones queued while
 * dispatching on this thread, then send the held replies. */
static void loop_dispatch(struct rpcrdma_svc *s, struct rpcrdma_svc_req *runnow)
{
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

static void *progress_main(void *arg)
{
	struct rpcrdma_svc *s = arg;
	struct loop l = {0};

	xprt_spin_init(&l.sp, SVC_SPIN_NS, s->progress == RPCRDMA_PROGRESS_BUSY_POLL);
	if (s->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct rpcrdma_svc_req *runnow = NULL;
		uint64_t t = monotonic_ns();
		bool active;
		int tmo, n;

		loop_spin_check(s, &l, t);
		tmo = t < l.spin_end ? 0 : SVC_BLOCK_MS;
		if (tmo && !l.blocked_at)
			l.blocked_at = t;
		n = loop_progress(s, &l, t, tmo, &runnow);
		active = n > 0 || runnow;
		loop_account(&l, t, tmo, active);
		loop_dispatch(s, runnow);
		if (active) {
			t = monotonic_ns();
			l.budget = xprt_spin_budget(&l.sp);
			l.spin_end = l.budget > UINT64_MAX - t ? UINT64_MAX : t + l.budget;
			l.spinning = l.budget != 0;
		}
	}
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
	rc = pthread_create(&s->pthr, NULL, progress_main, s);
	if (rc)
		return -rc;
	s->started = true;
	return 0;
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
	s->stopped = true;
	futex_cond_broadcast(&s->work_cv);
	futex_mutex_unlock(&s->lock);
	pthread_join(s->pthr, NULL);
	for (uint32_t i = 0; i < s->nwthr; i++)
		pthread_join(s->wthr[i], NULL);
	return rc;
}
