// SPDX-License-Identifier: MIT
/*
 * The event loop (evloop.h has the steps, the threads and the locks): the
 * parts off the hot path, and evloop_run() for the threads that do nothing
 * but run a loop (the server's progress thread, the backchannel's
 * threads). The client's leader runs the inline steps itself (clnt_loop.c)
 * because it leaves the loop as soon as its own call is done.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "transport/evloop.h"

void evloop_init(struct evloop *l, struct rpcrdma_dev *dev, struct rpcrdma_cq *cq, uint32_t spin_ns,
		 bool busy, int block_ms, uint64_t tick_ns, struct futex_mutex *lock,
		 struct futex_cond *cv, const struct evloop_ops *ops, void *ctx)
{
	memset(l, 0, sizeof(*l));
	l->dev = dev;
	l->cq = cq;
	l->block_ms = block_ms;
	xprt_spin_init(&l->spin, spin_ns, busy);
	l->tick_ns = tick_ns;
	l->lock = lock;
	l->cv = cv;
	l->ops = ops;
	l->ctx = ctx;
}

void evloop_stop(struct evloop *l)
{
	__atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
	if (l->cv)
		futex_cond_broadcast(l->cv);
}

void evloop_spin_expired(struct evloop *l)
{
	/* No completion, but bytes may be moving (a large chunk being read
	 * or written): that is activity too. */
	uint64_t b = l->ops && l->ops->bytes ? l->ops->bytes(l) : 0;

	if (b != l->bytes) {
		l->bytes = b;
		l->spin_end = l->t + l->budget;
	} else {
		xprt_spin_result(&l->spin, false);
		l->spinning = false;
	}
}

/* A loop without a device, lock held: the owner's end of iteration and
 * the tick, sleeping in between. */
static void run_sleeping(struct evloop *l)
{
	struct timespec ts;

	l->next_tick = 0; /* the first tick at once */
	for (;;) {
		if (l->ops->after)
			l->ops->after(l);
		if (l->stop)
			break;
		if (l->tick_ns) {
			l->t = monotonic_ns();
			if (evloop_tick_due(l)) {
				l->ops->tick(l);
				continue;
			}
			realtime_at(l->next_tick, &ts);
			(void)futex_cond_timedwait(l->cv, l->lock, &ts);
		} else {
			futex_cond_wait(l->cv, l->lock);
		}
	}
}

void evloop_run(struct evloop *l)
{
	if (!l->dev) {
		futex_mutex_lock(l->lock);
		run_sleeping(l);
		futex_mutex_unlock(l->lock);
		return;
	}
	evloop_begin(l);
	while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		evloop_iterate(l, l->ops->reap, l->ops->tick, l->ops->after);
}
