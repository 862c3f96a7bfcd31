/* SPDX-License-Identifier: MIT */
/*
 * The event loop every transport thread runs (evloop.c): the client's
 * leader (iterations inline, clnt_loop.c), the server's progress thread
 * (svc_loop.c) and the backchannel's threads (bc_requester.c,
 * bc_responder.c). An iteration:
 *
 *   1. poll   drive the provider (rpcrdma_dev_progress_poll) and reap the
 *             completions it made; after activity busy-poll for a while
 *             (the adaptive policy of spin.c), then block on the device fd
 *             for up to block_ms;
 *   2. reap   the owner handles what the poll produced (ops->reap);
 *   3. judge  tell the spin policy whether the spin paid off;
 *   4. tick   every tick_ns, periodic work: deadlines, connection events,
 *             reaping of dead connections (ops->tick);
 *   5. after  the owner's end of iteration (dispatch, ops->after).
 *
 * A loop without a device (dev NULL) has no steps 1-3: it sleeps on its
 * condition variable until woken (evloop_stop, the owner's own signals of
 * that variable) or its tick is due.
 *
 * Threads and locks. Steps 1-3 and the tick are the running thread's
 * alone. The stop flag is under the owner's lock (*lock). A device loop
 * is not woken from its blocking wait: stop is noticed within block_ms.
 * The hot path
 * (poll, judge, tick test) is static inline here: the client's synchronous
 * call runs it on every call.
 */
#ifndef RPCRDMA_TRANSPORT_EVLOOP_H
#define RPCRDMA_TRANSPORT_EVLOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "provider/dispatch_hot.h"
#include "rpcrdma/provider.h"
#include "transport/xprt.h"
#include "util/clock.h"
#include "util/futex_cond.h"
#include "util/futex_mutex.h"

struct evloop;

struct evloop_ops {
	/* Device loops: handle a poll round, @n what progress returned, the
	 * @m completions in @wc. True: it was activity (spin again). */
	bool (*reap)(struct evloop *l, int n, struct rpcrdma_wc *wc, int m);
	/* Every tick_ns (0: never). Device loops: no lock held; loops
	 * without a device: lock held (may be dropped). */
	void (*tick)(struct evloop *l);
	/* End of every iteration, locked as tick. */
	void (*after)(struct evloop *l);
	/* Bytes the connections moved so far: a spin that saw no completion
	 * but bytes moving (a large chunk) counts as activity. NULL: none. */
	uint64_t (*bytes)(struct evloop *l);
};

struct evloop {
	/* The device (NULL: a loop of the tick and the owner's own wakeups). */
	struct rpcrdma_dev *dev;
	struct rpcrdma_cq *cq; /* reaped with progress in one provider step */
	int block_ms;          /* longest blocking wait (stop, tick latency) */
	/* Busy-poll phase; the policy is spin.c's. */
	struct xprt_spin spin;
	uint64_t t;          /* the clock at the last look */
	uint64_t spin_end;   /* busy-poll until then, then block */
	uint64_t budget;     /* the spin budget of this spin phase */
	uint64_t blocked_at; /* when the loop started blocking, 0: not blocked */
	uint64_t bytes;      /* ops->bytes when the last spin was judged */
	uint32_t idle;       /* idle spin iterations */
	bool spinning;       /* a spin phase is running and not yet judged */
	/* The tick. */
	uint64_t tick_ns, next_tick;
	/* Stop, under *lock; cv: loops without a device sleep there. */
	struct futex_mutex *lock;
	struct futex_cond *cv;
	bool stop;
	const struct evloop_ops *ops;
	void *ctx; /* the owner's */
};

/* Completions one poll reaps at most. */
#define EVLOOP_WC 32

/* Set @l up: device @dev (NULL: none) reaping @cq, spin base budget
 * @spin_ns (@busy: never block), @block_ms, @tick_ns (0: no tick), the
 * owner's @lock and (no device) @cv, @ops and @ctx. */
void evloop_init(struct evloop *l, struct rpcrdma_dev *dev, struct rpcrdma_cq *cq, uint32_t spin_ns,
		 bool busy, int block_ms, uint64_t tick_ns, struct futex_mutex *lock,
		 struct futex_cond *cv, const struct evloop_ops *ops, void *ctx);
/* Run @l on this thread until evloop_stop(). No lock held. */
void evloop_run(struct evloop *l);
/* Lock held: make evloop_run() return (loops without a device at once,
 * device loops within block_ms). */
void evloop_stop(struct evloop *l);
/* The spin phase expired idle: judge it (out of line, rare). */
void evloop_spin_expired(struct evloop *l);

/* A new spin phase starting at l->t. */
static inline __attribute__((always_inline)) void evloop_spin_start(struct evloop *l)
{
	l->budget = xprt_spin_budget(&l->spin);
	l->spin_end = l->budget > UINT64_MAX - l->t ? UINT64_MAX : l->t + l->budget;
	l->spinning = l->budget != 0;
}

/* A run of the loop starts now (a leader taking over): spin first, the
 * tick one period from now. */
static inline __attribute__((always_inline)) void evloop_begin(struct evloop *l)
{
	l->t = monotonic_ns();
	l->blocked_at = 0;
	l->idle = 0;
	evloop_spin_start(l);
	l->next_tick = l->t + l->tick_ns;
}

/*
 * Step 1, no lock held: poll the provider until completions are there, the
 * spin ends or a blocking wait returns. Returns what progress returned;
 * *m: the completions reaped into @wc, *tmo: the wait used.
 */
static inline __attribute__((always_inline)) int
evloop_poll(struct evloop *l, struct rpcrdma_wc *wc, int *m, int *tmo)
{
	int n;

	*m = 0;
	for (;;) {
		*tmo = l->t < l->spin_end ? 0 : l->block_ms;
		if (*tmo && !l->blocked_at)
			l->blocked_at = l->t;
		/* Completions appear during progress (reaped with it in one
		 * provider step) or, for errors, when work is posted: the CQ
		 * is also looked at when progress produced something that was
		 * not ours, after a wait, and every 16th idle spin, which is
		 * also when the owner looks at its state again. Idle spin
		 * iterations in between take no lock. */
		if (__builtin_expect(!l->cq, 0)) {
			/* a server without connections: nothing to reap */
			n = rpcrdma_dev_progress(l->dev, *tmo);
			if (n != 0 || *tmo != 0)
				return n;
		} else {
			n = xprt_dev_progress_poll(l->dev, *tmo, l->cq, wc, EVLOOP_WC, m);
			if (*m > 0)
				return n;
			if (n != 0 || *tmo != 0 || (++l->idle & 15) == 0) {
				*m = rpcrdma_cq_poll(l->cq, wc, EVLOOP_WC);
				return n;
			}
		}
		xprt_spin_hint();
		/* The clock every 4th idle iteration: each one is a system
		 * call already, so the spin overshoots its end by three of
		 * them at most. */
		if ((l->idle & 3) != 0)
			continue;
		if (l->budget > l->spin.ns && l->spin_end - l->t < l->budget - l->spin.ns)
			xprt_spin_idle(&l->spin); /* spun past the base budget: let
						     a peer on this CPU run */
		l->t = monotonic_ns();
		if (l->t >= l->spin_end)
			return n;
	}
}

/* Step 3, l->t read after the reap: judge the spin phase by the round
 * (@active: it produced work; @tmo: the wait it used). */
static inline __attribute__((always_inline)) void evloop_judge(struct evloop *l, bool active,
							       int tmo)
{
	if (active) {
		/* A spin that saw it paid off; spin again. */
		if (l->spinning && tmo == 0)
			xprt_spin_result(&l->spin, true);
		if (l->blocked_at)
			xprt_spin_woke(&l->spin, l->t - l->blocked_at);
		l->blocked_at = 0;
		evloop_spin_start(l);
	} else if (l->spinning && l->t >= l->spin_end) {
		evloop_spin_expired(l);
	}
}

/* Step 4 test: is the tick due at l->t? If so it is re-armed. */
static inline __attribute__((always_inline)) bool evloop_tick_due(struct evloop *l)
{
	if (l->t < l->next_tick)
		return false;
	l->next_tick = l->t + l->tick_ns;
	return true;
}

/* The end of a function that callgrind's --toggle-collect names: no tail
 * call out of it, which would end it early in callgrind's eyes. */
#define EVLOOP_NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

/* Steps 2-3 of an iteration whose blocking wait timed out with nothing
 * (the peer was quiet for block_ms): out of line, with evloop_waited_after(),
 * so that bench/rpc's instruction count can leave the waiting out
 * (bench/rpc/instr.sh); the tick between them keeps its own function. */
static __attribute__((noinline, unused)) bool
evloop_waited_reap(struct evloop *l, bool (*reap)(struct evloop *, int, struct rpcrdma_wc *, int),
		   struct rpcrdma_wc *wc, int tmo)
{
	bool active = reap(l, 0, wc, 0);

	l->t = monotonic_ns();
	evloop_judge(l, active, tmo);
	EVLOOP_NO_TAIL_CALL();
	return active;
}

/* Step 5 of such an iteration (see evloop_iterate()). */
static __attribute__((noinline, unused)) void
evloop_waited_after(struct evloop *l, void (*after)(struct evloop *), bool active)
{
	if (after)
		after(l);
	if (active) {
		l->t = monotonic_ns();
		l->spin_end = l->budget > UINT64_MAX - l->t ? UINT64_MAX : l->t + l->budget;
	}
	EVLOOP_NO_TAIL_CALL();
}

/*
 * One iteration of a device loop (steps 1-5), no lock held. The owner's
 * steps are passed in: a thread that runs nothing but its loop passes its
 * own functions (svc_loop.c), so the compiler calls them directly and can
 * inline them into the loop; evloop_run() passes l->ops. @tick and @after
 * may be NULL.
 */
static inline __attribute__((always_inline)) void
evloop_iterate(struct evloop *l, bool (*reap)(struct evloop *, int, struct rpcrdma_wc *, int),
	       void (*tick)(struct evloop *), void (*after)(struct evloop *))
{
	struct rpcrdma_wc wc[EVLOOP_WC];
	bool active;
	int tmo, m, n;

	n = evloop_poll(l, wc, &m, &tmo);
	if (__builtin_expect(tmo != 0 && n == 0 && m == 0, 0)) {
		/* the same steps, the waiting out of line */
		active = evloop_waited_reap(l, reap, wc, tmo);
		if (evloop_tick_due(l) && tick)
			tick(l);
		evloop_waited_after(l, after, active);
		return;
	}
	active = reap(l, n, wc, m);
	l->t = monotonic_ns();
	evloop_judge(l, active, tmo);
	if (evloop_tick_due(l) && tick)
		tick(l);
	if (after)
		after(l);
	if (active) {
		/* The spin starts after what the round made ready ran. */
		l->t = monotonic_ns();
		l->spin_end = l->budget > UINT64_MAX - l->t ? UINT64_MAX : l->t + l->budget;
	}
}

#endif
