/* SPDX-License-Identifier: MIT */
/*
 * The device's event loop: one epoll set holds every socket of the device
 * (endpoints, listeners, pending connection requests), a timerfd for the
 * connection deadlines (cm.c) and an eventfd that wakes the optional
 * progress thread. A progress call is one epoll_wait() and one lock round
 * over its events (progress_events), then, when that left a message half
 * received, a bounded receive spin (progress_run). The busy-poll case (zero
 * timeout) stays small: one raw system call and no lock round when idle,
 * and on a one-connection device the socket is tried without asking epoll
 * (progress_once).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "softiwarp/siw.h"

#define POLL_TAG_TIMER UINT64_MAX
#define POLL_TAG_WAKE  (UINT64_MAX - 1u)
/* marks the event progress_once() makes up for the solo endpoint (never
 * reported by Linux epoll) */
#define SIW_EV_SOLO EPOLLMSG

/* ---------------- poll registry ---------------- */

/* dev->solo_tag after an endpoint socket joined or left the epoll set */
static void solo_update(struct siw_dev *dev)
{
	uint64_t tag = 0;

	if (dev->n_ep_polls == 1 && dev->tun.solo) {
		for (uint32_t slot = 0; slot < dev->npolls; slot++) {
			const struct siw_pollable *p = dev->polls[slot].p;

			if (p && p->kind == SIW_POLL_EP) {
				tag = (uint64_t)dev->polls[slot].gen << 32 | slot;
				break;
			}
		}
	}
	__atomic_store_n(&dev->solo_tag, tag, __ATOMIC_RELAXED);
}

/*
 * A table grown for thousands of connections goes back to a size for the
 * ones left once fewer than a quarter of its slots are in use (issue 38),
 * if none in use sits above the new size (a slot's index is in the
 * epoll registration of its object). Tried again only once the count
 * has halved, so a close storm does not walk the table every time.
 */
static void poll_shrink(struct siw_dev *dev)
{
	uint32_t n = dev->npolls, top = n, gen = dev->poll_gen0;
	struct siw_poll_slot *np;

	if (n <= 64u || dev->npolls_used >= n / 4u ||
	    (dev->poll_shrink_failed && dev->npolls_used * 2u >= dev->poll_shrink_failed))
		return;
	while (top > 0 && !dev->polls[top - 1].p)
		top--;
	while (n > 64u && n / 2u >= top && n / 2u >= dev->npolls_used * 2u)
		n /= 2u;
	if (n == dev->npolls) {
		dev->poll_shrink_failed = dev->npolls_used ? dev->npolls_used : 1u;
		return;
	}
	for (uint32_t i = n; i < dev->npolls; i++)
		if (dev->polls[i].gen >= gen)
			gen = dev->polls[i].gen + 1u;
	np = realloc(dev->polls, (size_t)n * sizeof(*np));
	if (!np)
		return;
	dev->polls = np;
	dev->npolls = n;
	dev->poll_gen0 = gen;
	dev->poll_shrink_failed = 0;
	if (dev->poll_hint > n)
		dev->poll_hint = n;
}

int siw_poll_add(struct siw_dev *dev, struct siw_pollable *p, int fd, uint32_t events)
{
	struct epoll_event ev;
	uint32_t slot;

	for (slot = dev->poll_hint; slot < dev->npolls; slot++) {
		if (!dev->polls[slot].p)
			break;
	}
	if (slot == dev->npolls) {
		uint32_t n = dev->npolls ? dev->npolls * 2u : 64u;
		struct siw_poll_slot *np = realloc(dev->polls, (size_t)n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		for (uint32_t i = dev->npolls; i < n; i++) {
			np[i].p = NULL;
			np[i].gen = dev->poll_gen0;
		}
		dev->polls = np;
		dev->npolls = n;
	}
	dev->polls[slot].p = p;
	dev->polls[slot].gen++;
	p->slot = slot;
	p->events = events;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.u64 = (uint64_t)dev->polls[slot].gen << 32 | slot;
	if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		dev->polls[slot].p = NULL;
		dev->poll_hint = slot;
		return -errno;
	}
	dev->poll_hint = slot + 1;
	dev->npolls_used++;
	if (p->kind == SIW_POLL_EP) {
		dev->n_ep_polls++;
		solo_update(dev);
	}
	return 0;
}

void siw_poll_mod(struct siw_dev *dev, struct siw_pollable *p, int fd, uint32_t events)
{
	struct epoll_event ev;

	if (p->events == events)
		return;
	p->events = events;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.u64 = (uint64_t)dev->polls[p->slot].gen << 32 | p->slot;
	(void)epoll_ctl(dev->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void siw_poll_del(struct siw_dev *dev, struct siw_pollable *p, int fd)
{
	if (p->slot < dev->npolls && dev->polls[p->slot].p == p) {
		(void)epoll_ctl(dev->epfd, EPOLL_CTL_DEL, fd, NULL);
		dev->polls[p->slot].p = NULL;
		dev->npolls_used--;
		if (p->slot < dev->poll_hint)
			dev->poll_hint = p->slot;
		poll_shrink(dev);
		if (p->kind == SIW_POLL_EP) {
			dev->n_ep_polls--;
			solo_update(dev);
		}
	}
}

void siw_ep_want_write(struct siw_ep *ep, bool on)
{
	if (ep->fd >= 0)
		siw_poll_mod(ep->dev, &ep->poll, ep->fd, EPOLLIN | (on ? EPOLLOUT : 0u));
}

void siw_timer_rearm(struct siw_dev *dev)
{
	uint64_t next = 0;
	struct itimerspec its;

	for (struct siw_ep *ep = dev->eps; ep; ep = ep->next) {
		if (ep->deadline_ms && (!next || ep->deadline_ms < next))
			next = ep->deadline_ms;
	}
	for (struct siw_creq *r = dev->creqs; r; r = r->next) {
		if (r->deadline_ms && (!next || r->deadline_ms < next))
			next = r->deadline_ms;
	}
	memset(&its, 0, sizeof(its));
	if (next) {
		its.it_value.tv_sec = (time_t)(next / 1000u);
		its.it_value.tv_nsec = (long)(next % 1000u) * 1000000L;
	}
	(void)timerfd_settime(dev->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* ---------------- progress ---------------- */

static void ep_ready(struct siw_ep *ep, uint32_t events)
{
	if (ep->state == SIW_EP_CONNECTING) {
		siw_cm_ep_ready(ep, events);
		if (ep->fd < 0)
			return;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		(void)siw_rx_process(ep);
	/* rx may have freed ORD slots or queued Read Responses */
	if (ep->fd >= 0 && (siw_tx_pending(ep) || (events & EPOLLOUT)))
		(void)siw_tx_process(ep);
	if (ep->cq_overrun)
		siw_ep_check_overrun(ep);
}

void siw_flush_deferred(struct siw_dev *dev)
{
	for (struct siw_ep *ep = dev->eps; ep && dev->ndeferred; ep = ep->next) {
		if (ep->tx_deferred)
			(void)siw_tx_process(ep);
		if (ep->cq_overrun)
			siw_ep_check_overrun(ep);
	}
}

/* The events one epoll_wait() returned, handled in one lock round. Out of
 * line: an idle busy-poll iteration (no event) pays only progress_once()'s
 * small frame. */
__attribute__((noinline)) static int progress_events(struct siw_dev *dev,
						     const struct epoll_event *evs, int n,
						     struct siw_cq *pcq, struct rpcrdma_wc *wc,
						     int nwc, int *npolled)
{
	int produced;

	siw_dev_lock(dev);
	dev->produced = 0;
	__atomic_store_n(&dev->rx_spin_want, 0, __ATOMIC_RELAXED);
	if (pcq) {
		/* completions of pcq made in this round go straight to @wc
		 * while its ring is empty (siw_cq_push) */
		dev->reap_cq = pcq;
		dev->reap_wc = wc;
		dev->reap_cap = nwc;
		dev->reap_n = 0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;
		uint32_t slot = (uint32_t)tag;
		struct siw_pollable *p;

		if (tag == POLL_TAG_TIMER) {
			uint64_t v;
			ssize_t r = read(dev->timerfd, &v, sizeof(v));

			(void)r;
			siw_cm_timers(dev, siw_now_ms());
			siw_timer_rearm(dev);
			continue;
		}
		if (tag == POLL_TAG_WAKE) {
			uint64_t v;
			ssize_t r = read(dev->wakefd, &v, sizeof(v));

			(void)r;
			continue;
		}
		/* stale event of an object removed meanwhile: skip */
		if (slot >= dev->npolls || dev->polls[slot].gen != (uint32_t)(tag >> 32))
			continue;
		p = dev->polls[slot].p;
		if (!p)
			continue;
		switch (p->kind) {
		case SIW_POLL_EP: {
			struct siw_ep *ep = container_of(p, struct siw_ep, poll);
			uint32_t events = evs[i].events;

			/* made up by progress_once(): a receive attempt,
			 * for a connected endpoint only */
			if (events & SIW_EV_SOLO) {
				if (ep->state != SIW_EP_RTS)
					break;
				events &= ~(uint32_t)SIW_EV_SOLO;
			}
			ep_ready(ep, events);
			break;
		}
		case SIW_POLL_LISTENER:
			siw_cm_listener_ready(container_of(p, struct siw_listener, poll));
			break;
		case SIW_POLL_CREQ:
			siw_cm_creq_ready(container_of(p, struct siw_creq, poll), evs[i].events);
			break;
		}
	}
	produced = dev->produced;
	if (pcq) {
		int got = dev->reap_n;

		dev->reap_cq = NULL;
		/* what went through the ring (it was not empty, or @wc was
		 * full), after what was reaped directly: same lock round */
		if (produced > 0 && pcq->count && got < nwc)
			got += siw_cq_take(pcq, wc + got, nwc - got);
		*npolled = got;
	}
	siw_dev_unlock(dev);
	return produced;
}

/* epoll_wait() with a zero timeout, the busy-poll step: raw, since it
 * never blocks and so need not be a cancellation point (glibc's wrapper
 * adds cancellation bookkeeping to every call). epoll_wait
 * is epoll_pwait's effect without a signal mask, in four registers (fewer
 * of ours to keep around the call). */
static inline int epoll_poll0(const struct siw_dev *dev, struct epoll_event *evs)
{
#ifdef SYS_epoll_wait
	return (int)siw_syscall4(SYS_epoll_wait, dev->epfd, (long)evs, 64, 0);
#else
	return (int)siw_syscall(SYS_epoll_pwait, dev->epfd, (long)evs, 64, 0, 0, 8);
#endif
}

/* The events of one epoll_wait(), then the receive spin: when that round
 * made nothing for the caller and left a message half received (rx_stop()
 * in qp_rx.c), poll again, yielding the CPU between empty polls (a sender
 * on the same CPU gets to run), until bytes came that made something or
 * finished the message, or the endpoint's budget (RPCRDMA_SIW_RX_SPIN_US)
 * passed without bytes, or the budget plus SIW_RX_SPIN_CALL_NS passed in
 * all. A zero timeout still means the call does not wait for the peer: it
 * only finishes, boundedly, what the peer is in the middle of sending. */
__attribute__((noinline)) static int progress_run(struct siw_dev *dev,
						  const struct epoll_event *evs0, int n,
						  struct siw_cq *pcq, struct rpcrdma_wc *wc,
						  int nwc, int *npolled)
{
	struct epoll_event evs[64];
	uint64_t start, last, now, budget;
	int produced = progress_events(dev, evs0, n, pcq, wc, nwc, npolled);

	/* read without the lock: written only inside progress_events()'s
	 * lock round, which this thread just left */
	budget = __atomic_load_n(&dev->rx_spin_want, __ATOMIC_RELAXED);
	if (produced || !budget)
		return produced;
	start = last = monotonic_ns();
	if (start < __atomic_load_n(&dev->rx_spin_off_until, __ATOMIC_RELAXED))
		return 0;
	__atomic_fetch_add(&dev->rx_spins, 1, __ATOMIC_RELAXED);
	for (;;) {
		n = epoll_poll0(dev, evs);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		if (n > 0) {
			produced = progress_events(dev, evs, n, pcq, wc, nwc, npolled);
			if (produced || !__atomic_load_n(&dev->rx_spin_want, __ATOMIC_RELAXED)) {
				__atomic_store_n(&dev->rx_spin_streak, 0, __ATOMIC_RELAXED);
				__atomic_fetch_add(&dev->rx_spin_hits, 1, __ATOMIC_RELAXED);
				return produced;
			}
		} else {
			uint64_t y = yield_ns();

			now = monotonic_ns();
			/* another task ran meanwhile: the CPU is shared (with
			 * the sender, most likely), where spinning only slices
			 * the sender's work; sleep as usual instead */
			if (y > SIW_RX_SPIN_YIELD_NS) {
				/* several in a row (not one preemption of this
				 * virtual CPU, or a kernel thread): a rest */
				if (__atomic_add_fetch(&dev->rx_spin_streak, 1, __ATOMIC_RELAXED) >=
				    SIW_RX_SPIN_SHARED_STREAK)
					__atomic_store_n(&dev->rx_spin_off_until,
							 now + SIW_RX_SPIN_BACKOFF_NS,
							 __ATOMIC_RELAXED);
				__atomic_fetch_add(&dev->rx_spin_shared, 1, __ATOMIC_RELAXED);
				return 0;
			}
		}
		if (n > 0)
			now = last = monotonic_ns();
		if (now - last > budget || now - start > budget + SIW_RX_SPIN_CALL_NS) {
			__atomic_fetch_add(&dev->rx_spin_misses, 1, __ATOMIC_RELAXED);
			return 0;
		}
	}
}

void siw_dev_rx_spin_stats(struct rpcrdma_dev *d, uint64_t out[4])
{
	struct siw_dev *dev = to_siw_dev(d);

	out[0] = __atomic_load_n(&dev->rx_spins, __ATOMIC_RELAXED);
	out[1] = __atomic_load_n(&dev->rx_spin_hits, __ATOMIC_RELAXED);
	out[2] = __atomic_load_n(&dev->rx_spin_misses, __ATOMIC_RELAXED);
	out[3] = __atomic_load_n(&dev->rx_spin_shared, __ATOMIC_RELAXED);
}

/* progress_once() when it may block or has deferred work to flush. */
__attribute__((noinline)) static int progress_wait(struct siw_dev *dev, int timeout_ms,
						   struct siw_cq *pcq, struct rpcrdma_wc *wc,
						   int nwc, int *npolled)
{
	struct epoll_event evs[64];
	int n;

	/* Work held by RPCRDMA_SEND_DEFER goes before we wait for anything
	 * (provider.h: at the latest with the next progress call). */
	if (__atomic_load_n(&dev->ndeferred, __ATOMIC_RELAXED)) {
		siw_dev_lock(dev);
		siw_flush_deferred(dev);
		siw_dev_unlock(dev);
	}
	/* a wait that can block stays a cancellation point (epoll_wait()) */
	if (timeout_ms == 0)
		n = epoll_poll0(dev, evs);
	else
		n = epoll_wait(dev->epfd, evs, 64, timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	return progress_run(dev, evs, n, pcq, wc, nwc, npolled);
}

/* One progress round. The busy-poll case (zero timeout, nothing deferred)
 * is kept small, since most of its calls find nothing: one raw system call
 * and no lock round. */
static inline __attribute__((always_inline)) int progress_once(struct siw_dev *dev, int timeout_ms,
							       struct siw_cq *pcq,
							       struct rpcrdma_wc *wc, int nwc,
							       int *npolled)
{
	struct epoll_event evs[64];
	uint64_t solo;
	int n;

	if (timeout_ms != 0 || __atomic_load_n(&dev->ndeferred, __ATOMIC_RELAXED))
		return progress_wait(dev, timeout_ms, pcq, wc, nwc, npolled);
	solo = __atomic_load_n(&dev->solo_tag, __ATOMIC_RELAXED);
	if (solo) {
		/* a count, not a sequence: threads that race on it only
		 * shift which call asks epoll (no locked instruction here) */
		uint32_t k = __atomic_load_n(&dev->solo_iter, __ATOMIC_RELAXED) + 1u;

		__atomic_store_n(&dev->solo_iter, k, __ATOMIC_RELAXED);
		solo = (k & (SIW_SOLO_EPOLL_EVERY - 1u)) ? solo : 0;
	}
	if (solo) {
		/* the one connection's socket, without asking epoll */
		evs[0].events = EPOLLIN | SIW_EV_SOLO;
		evs[0].data.u64 = solo;
		return progress_run(dev, evs, 1, pcq, wc, nwc, npolled);
	}
	n = epoll_poll0(dev, evs);
	if (n == 0)
		return 0; /* an idle busy-poll iteration */
	if (n < 0)
		return -errno;
	return progress_run(dev, evs, n, pcq, wc, nwc, npolled);
}

static void *progress_thread(void *arg)
{
	struct siw_dev *dev = arg;

	while (!__atomic_load_n(&dev->thread_stop, __ATOMIC_ACQUIRE))
		(void)progress_once(dev, -1, NULL, NULL, 0, NULL);
	return NULL;
}

int siw_progress(struct rpcrdma_dev *d, int timeout_ms)
{
	struct siw_dev *dev = to_siw_dev(d);

	if (dev->thread_mode)
		return -EINVAL;
	return progress_once(dev, timeout_ms, NULL, NULL, 0, NULL);
}

int siw_progress_poll(struct rpcrdma_dev *d, int timeout_ms, struct rpcrdma_cq *cq,
		      struct rpcrdma_wc *wc, int n, int *npolled)
{
	struct siw_dev *dev = to_siw_dev(d);

	if (dev->thread_mode)
		return -EINVAL;
	return progress_once(dev, timeout_ms, to_siw_cq(cq), wc, n, npolled);
}

int siw_get_fd(const struct rpcrdma_dev *d)
{
	return container_of(d, const struct siw_dev, base)->epfd;
}

/* ---------------- setup and teardown ---------------- */

static int epoll_add_tag(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = tag;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int siw_progress_init(struct siw_dev *dev)
{
	int rc;

	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	dev->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	dev->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dev->epfd < 0 || dev->timerfd < 0 || dev->wakefd < 0)
		return -errno;
	rc = epoll_add_tag(dev->epfd, dev->timerfd, POLL_TAG_TIMER);
	return rc ? rc : epoll_add_tag(dev->epfd, dev->wakefd, POLL_TAG_WAKE);
}

void siw_progress_fini(struct siw_dev *dev)
{
	if (dev->epfd >= 0)
		close(dev->epfd);
	if (dev->timerfd >= 0)
		close(dev->timerfd);
	if (dev->wakefd >= 0)
		close(dev->wakefd);
	free(dev->polls);
	dev->polls = NULL;
}

int siw_progress_thread_start(struct siw_dev *dev)
{
	int rc;

	dev->thread_mode = true;
	rc = pthread_create(&dev->thread, NULL, progress_thread, dev);
	return rc ? -rc : 0;
}

void siw_progress_thread_stop(struct siw_dev *dev)
{
	uint64_t one = 1;
	ssize_t r;

	if (!dev->thread_mode)
		return;
	__atomic_store_n(&dev->thread_stop, true, __ATOMIC_RELEASE);
	r = write(dev->wakefd, &one, sizeof(one));
	(void)r;
	pthread_join(dev->thread, NULL);
}
