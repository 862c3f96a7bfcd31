// SPDX-License-Identifier: MIT
/*
 * The forward requester's progress loop (transport/requester.h).
 *
 * Threads (leader/follower). Whoever waits drives the device: a thread
 * that needs a reply (a synchronous caller) becomes the "leader" when no
 * one else is, and itself runs iterations of the client's event loop
 * (c->loop, evloop.h, inline): it polls the provider, reaps completions,
 * matches replies to slots by XID, decodes results and runs completion
 * callbacks (without the lock), first busy-polling for a bounded time (the
 * adaptive policy of spin.c), then blocking on the device fd.
 * Other waiters sleep on their slot's condition variable until the leader
 * completes their call or hands leadership over when its own call is done.
 * With one calling thread there is no thread handoff at all: the caller
 * sends, polls and decodes. A background thread leads only when there is
 * work no caller waits for: asynchronous calls in flight (their callbacks
 * run on it), or a lost connection to re-make for queued calls.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "transport/backchannel_hooks.h"
#include "transport/requester.h"
#include "util/clock.h"

/* Leader: longest single wait in the provider, so timeouts are noticed. */
#define CLNT_BLOCK_MS 20
/* Background thread: longest sleep while another thread leads or waits,
 * and while there is no work at all. */
#define CLNT_BG_BUSY_MS 50
#define CLNT_BG_IDLE_MS 2000
/* How often the leader looks at call deadlines. */
#define CLNT_TMO_CHECK_NS 5000000ull

/* The client whose completion callbacks this thread is running as its
 * leader (lead_callbacks), else NULL. */
_Thread_local struct rpcrdma_clnt *tl_cb_clnt;

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

/* evloop ops->bytes: bytes the connection moved so far (both directions). */
static uint64_t ep_bytes(struct evloop *l)
{
	struct rpcrdma_clnt *c = l->ctx;
	struct rpcrdma_ep_stats st;

	if (!c->ep || rpcrdma_ep_query_stats(c->ep, &st))
		return 0;
	return st.tx_bytes + st.rx_bytes;
}

static const struct evloop_ops clnt_loop_ops = {.bytes = ep_bytes};

void clnt_loop_init(struct rpcrdma_clnt *c)
{
	evloop_init(&c->loop, c->dev, c->cq,
		    c->progress == RPCRDMA_PROGRESS_BLOCK ? 0 : CLNT_SPIN_NS,
		    c->progress == RPCRDMA_PROGRESS_BUSY_POLL, CLNT_BLOCK_MS, CLNT_TMO_CHECK_NS,
		    &c->lock, NULL, &clnt_loop_ops, c);
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

/* Lock taken: handle the @m completions in @wc, reaping more while full
 * batches come. */
static inline __attribute__((always_inline)) void
lead_reap(struct rpcrdma_clnt *c, struct rpcrdma_wc *wc, int m, struct cb_list *cbl)
{
	futex_mutex_lock(&c->lock);
	for (;;) {
		/* one place that handles completions */
		for (int i = 0; i < m; i++)
			clnt_handle_wc(c, &wc[i], cbl);
		if (m != EVLOOP_WC)
			break;
		/* more completions than one batch: keep reaping */
		futex_mutex_unlock(&c->lock);
		m = rpcrdma_cq_poll(c->cq, wc, EVLOOP_WC);
		futex_mutex_lock(&c->lock);
	}
}

/* Lock held (dropped to read events): connection events. */
__attribute__((noinline)) static void lead_events(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	struct rpcrdma_event ev;

	futex_mutex_unlock(&c->lock);
	while (rpcrdma_evch_get(c->evch, &ev) == 0) {
		futex_mutex_lock(&c->lock);
		if (ev.ep == c->ep &&
		    (ev.type == RPCRDMA_EV_DISCONNECTED || ev.type == RPCRDMA_EV_TERMINATE))
			clnt_conn_lost(c, cbl);
		futex_mutex_unlock(&c->lock);
	}
	futex_mutex_lock(&c->lock);
}

/* The tick's work, out of line (its own function: bench/rpc's instruction
 * count leaves it out, as work of the clock, not of calls). */
__attribute__((noinline)) static void lead_tick(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	lead_events(c, cbl);
	clnt_check_timeouts(c, cbl);
	if (clnt_credits_held_by_dead(c)) {
		c->st.timeout_resets++;
		clnt_conn_lost(c, cbl); /* reconnect() closes it */
	}
	EVLOOP_NO_TAIL_CALL();
}

/* Lock held: connection events when progress saw some (@evs), and at the
 * loop's tick (every CLNT_TMO_CHECK_NS) the deadlines and the credits of
 * dead calls too. */
static inline __attribute__((always_inline)) void lead_watch(struct rpcrdma_clnt *c, bool evs,
							     struct cb_list *cbl)
{
	if (evloop_tick_due(&c->loop))
		lead_tick(c, cbl);
	else if (evs)
		lead_events(c, cbl);
}

/* lead_pass() after a blocking wait that timed out with nothing: its
 * steps 2-3 out of line, so that bench/rpc's instruction count can leave
 * the waiting out (bench/rpc/instr.sh); the tick keeps its own function. */
__attribute__((noinline)) static void lead_waited(struct rpcrdma_clnt *c, struct rpcrdma_wc *wc,
						  int tmo, struct cb_list *cbl)
{
	struct evloop *l = &c->loop;

	lead_reap(c, wc, 0, cbl);
	l->t = monotonic_ns();
	c->now_ns = l->t;
	evloop_judge(l, false, tmo);
	EVLOOP_NO_TAIL_CALL();
}

/* One iteration of the client's loop (evloop.h steps 1-4): entered
 * without the lock, left with it. */
static inline __attribute__((always_inline)) void
lead_pass(struct rpcrdma_clnt *c, struct rpcrdma_wc *wc, struct cb_list *cbl)
{
	struct evloop *l = &c->loop;
	int tmo, n, m;

	n = evloop_poll(l, wc, &m, &tmo);
	if (__builtin_expect(tmo != 0 && n == 0 && m == 0, 0)) {
		/* the same steps, the waiting out of line */
		lead_waited(c, wc, tmo, cbl);
		lead_watch(c, false, cbl);
		if (c->txq_head)
			clnt_kick_tx(c, cbl);
		return;
	}
	lead_reap(c, wc, m, cbl);
	l->t = monotonic_ns();
	c->now_ns = l->t;
	evloop_judge(l, n > 0 || m > 0, tmo);
	lead_watch(c, n > m, cbl);
	if (c->txq_head)
		clnt_kick_tx(c, cbl);
}

/* Lock held: run the completion callbacks the pass collected. True when
 * it returns without the lock, for the next pass to start at once: the
 * background leader of a running stream of async calls (nothing else to
 * watch) goes straight back to progress after the callbacks; what the
 * loop's head looks at is looked at here, and again on the next pass that
 * reaps something or waits. */
static inline __attribute__((always_inline)) bool
lead_run_callbacks(struct rpcrdma_clnt *c, struct clnt_slot *mine, struct cb_list *cbl)
{
	while (cbl->n) {
		bool stream = !mine && !c->bc && !c->stop && !c->nwaiting && c->state == C_UP;

		/* Asynchronous calls the callbacks issue are queued, not sent
		 * one by one (call_start): the last callback's call takes
		 * them along, in one transmit (kick_tx). */
		c->cb_issued = 0;
		futex_mutex_unlock(&c->lock);
		tl_cb_clnt = c;
		lead_callbacks(c, cbl);
		tl_cb_clnt = NULL;
		if (stream && c->cb_issued && !c->cb_queued)
			return true; /* issued and sent: nasync > 0 */
		futex_mutex_lock(&c->lock);
		c->cb_queued = 0;
		if (c->txq_head)
			clnt_kick_tx(c, cbl);
	}
	return false;
}

/*
 * Drive the device until @mine is done (a synchronous caller) or, for the
 * background thread (@mine NULL), until there is no work it alone must do
 * or a synchronous caller could take over. Lock held on entry and exit
 * (dropped around provider calls and callbacks); c->leader is ours.
 */
void clnt_lead(struct rpcrdma_clnt *c, struct clnt_slot *mine)
{
	struct rpcrdma_wc wc[EVLOOP_WC];
	struct cb_list cbl;
	bool unlocked;

	cbl.n = 0;
	evloop_begin(&c->loop);
	for (;;) {
		if (mine ? mine->done : (!bg_has_work(c) || c->nwaiting))
			break;
		if (c->stop && !mine)
			break;
		if (c->state == C_DOWN) {
			clnt_reconnect(c, &cbl);
			unlocked = lead_run_callbacks(c, mine, &cbl);
		} else if (c->state == C_DEAD) {
			break; /* nothing to drive; callers fail */
		} else {
			futex_mutex_unlock(&c->lock);
			unlocked = true;
		}
		while (unlocked) {
			lead_pass(c, wc, &cbl);
			unlocked = lead_run_callbacks(c, mine, &cbl);
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
void clnt_handoff(struct rpcrdma_clnt *c)
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

void *clnt_bg_main(void *arg)
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

			/* Work appears only with a signal (call_async, slot
			 * waiters, clnt_handoff): the timeout is a safety net,
			 * long when idle so thousands of idle clients in one
			 * process cost no CPU (at 50 ms, 1,000 of them kept
			 * 40% of a core busy waking up). */
			realtime_in_ms(c->leader || c->nwaiting ? CLNT_BG_BUSY_MS : CLNT_BG_IDLE_MS,
				       &ts);
			(void)futex_cond_timedwait(&c->bg_cv, &c->lock, &ts);
			continue;
		}
		c->leader = true;
		clnt_lead(c, NULL);
		c->leader = false;
		clnt_handoff(c);
	}
	futex_mutex_unlock(&c->lock);
	return NULL;
}

/* No lock held (requester.h). */
void clnt_shutdown(struct rpcrdma_clnt *c)
{
	struct cb_list cbl = {0};

	futex_mutex_lock(&c->lock);
	/* atomic: clnt_conn_open reads it without the lock (reconnect.c) */
	__atomic_store_n(&c->stop, true, __ATOMIC_RELAXED);
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
}
