// SPDX-License-Identifier: MIT
/*
 * The forward requester's progress loop (transport/requester.h).
 *
 * Threads (leader/follower). Whoever waits drives the device: a thread
 * that needs a reply (a synchronous caller) becomes the "leader" when no
 * one else is, and itself polls the provider (rpcrdma_dev_progress), reaps
 * completions, matches replies to slots by XID, decodes results and runs
 * completion callbacks (without the lock), first busy-polling for a bounded
 * time (the adaptive policy of spin.c), then blocking on the device fd.
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

/* The leader's clock and busy-poll state across the passes of lead(). */
struct lead_clock {
	uint64_t t;          /* the clock at the last look */
	uint64_t spin_end;   /* busy-poll until then, then block */
	uint64_t next_tmo;   /* next look at deadlines and events */
	uint64_t budget;     /* the spin budget of this spin phase */
	uint64_t blocked_at; /* when the loop started blocking, 0: not blocked */
	bool spinning;       /* a spin phase is running and not yet judged */
	uint32_t idle;       /* idle spin iterations */
};

#define LEAD_WC 32

/* A new spin phase starting at lk->t. */
static inline __attribute__((always_inline)) void lead_spin_start(struct rpcrdma_clnt *c,
								  struct lead_clock *lk)
{
	lk->budget = xprt_spin_budget(&c->spin);
	lk->spin_end = lk->budget > UINT64_MAX - lk->t ? UINT64_MAX : lk->t + lk->budget;
	lk->spinning = lk->budget != 0;
}

/* Lock not held: poll the provider until completions are there, the spin
 * ends or a blocking wait returns. *n: what progress returned, *m: the
 * completions reaped into @wc, *tmo: the wait used. */
static inline __attribute__((always_inline)) void lead_poll(struct rpcrdma_clnt *c,
							    struct lead_clock *lk,
							    struct rpcrdma_wc *wc, int *n, int *m,
							    int *tmo)
{
	*m = 0;
	for (;;) {
		*tmo = lk->t < lk->spin_end ? 0 : CLNT_BLOCK_MS;
		if (*tmo && !lk->blocked_at)
			lk->blocked_at = lk->t;
		/* Completions appear during progress (reaped with it in one
		 * provider step) or, for errors, when work is posted: the CQ
		 * is also looked at when progress produced something that was
		 * not ours, after a wait, and every 16th idle spin, which is
		 * also when the state under the lock is looked at again. Idle
		 * spin iterations in between take no lock. */
		*n = rpcrdma_dev_progress_poll(c->dev, *tmo, c->cq, wc, LEAD_WC, m);
		if (*m > 0)
			break;
		if (*n != 0 || *tmo != 0 || (++lk->idle & 15) == 0) {
			*m = rpcrdma_cq_poll(c->cq, wc, LEAD_WC);
			break;
		}
		xprt_spin_hint();
		/* The clock every 4th idle iteration: each one is a system
		 * call already, so the spin overshoots its end by three of
		 * them at most. */
		if ((lk->idle & 3) != 0)
			continue;
		if (lk->budget > CLNT_SPIN_NS && lk->spin_end - lk->t < lk->budget - CLNT_SPIN_NS)
			xprt_spin_idle(&c->spin); /* spun past the base budget: let
						     a peer on this CPU run */
		lk->t = monotonic_ns();
		if (lk->t >= lk->spin_end)
			break;
	}
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
		if (m != LEAD_WC)
			break;
		/* more completions than one batch: keep reaping */
		futex_mutex_unlock(&c->lock);
		m = rpcrdma_cq_poll(c->cq, wc, LEAD_WC);
		futex_mutex_lock(&c->lock);
	}
}

/* Lock held: judge the spin phase by what the pass saw (spin.c). */
static inline __attribute__((always_inline)) void
lead_spin_judge(struct rpcrdma_clnt *c, struct lead_clock *lk, int n, int m, int tmo)
{
	if (n > 0 || m > 0) {
		/* Activity: a spin that saw it paid off; spin again. */
		if (lk->spinning && tmo == 0)
			xprt_spin_result(&c->spin, true);
		if (lk->blocked_at)
			xprt_spin_woke(&c->spin, lk->t - lk->blocked_at);
		lk->blocked_at = 0;
		lead_spin_start(c, lk);
	} else if (lk->spinning && lk->t >= lk->spin_end) {
		/* No completion, but bytes may be moving (a large chunk being
		 * read or written): that is activity too. */
		uint64_t b = ep_bytes(c->ep);

		if (b != c->spin_bytes) {
			c->spin_bytes = b;
			lk->spin_end = lk->t + lk->budget;
		} else {
			xprt_spin_result(&c->spin, false);
			lk->spinning = false;
		}
	}
}

/* Lock held (dropped to read events): connection events, and every
 * CLNT_TMO_CHECK_NS the deadlines and the credits of dead calls. */
static inline __attribute__((always_inline)) void
lead_watch(struct rpcrdma_clnt *c, struct lead_clock *lk, bool evs, struct cb_list *cbl)
{
	struct rpcrdma_event ev;

	if (evs || lk->t >= lk->next_tmo) {
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
	if (lk->t >= lk->next_tmo) {
		lk->next_tmo = lk->t + CLNT_TMO_CHECK_NS;
		clnt_check_timeouts(c, cbl);
		if (clnt_credits_held_by_dead(c)) {
			c->st.timeout_resets++;
			clnt_conn_lost(c, cbl); /* reconnect() closes it */
		}
	}
}

/* One pass of progress: entered without the lock, left with it. */
static inline __attribute__((always_inline)) void
lead_pass(struct rpcrdma_clnt *c, struct lead_clock *lk, struct rpcrdma_wc *wc, struct cb_list *cbl)
{
	int tmo, n, m;

	lead_poll(c, lk, wc, &n, &m, &tmo);
	lead_reap(c, wc, m, cbl);
	lk->t = monotonic_ns();
	c->now_ns = lk->t;
	lead_spin_judge(c, lk, n, m, tmo);
	lead_watch(c, lk, n > m, cbl);
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
	struct rpcrdma_wc wc[LEAD_WC];
	struct cb_list cbl;
	struct lead_clock lk = {0};
	bool unlocked;

	cbl.n = 0;
	lk.t = monotonic_ns();
	lead_spin_start(c, &lk);
	lk.next_tmo = lk.t + CLNT_TMO_CHECK_NS;
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
			lead_pass(c, &lk, wc, &cbl);
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
}
