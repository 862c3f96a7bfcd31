/* SPDX-License-Identifier: MIT */
/*
 * softiwarp device and verbs: the ops table, the device (epoll set, timer,
 * optional progress thread), protection domains, memory registration,
 * endpoint creation and work posting. Protocol work happens in cm.c
 * (connection setup), qp_tx.c / qp_rx.c (data) and qp.c (state).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
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

	if (dev->n_ep_polls == 1 && !dev->solo_off) {
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

int siw_poll_add(struct siw_dev *dev, struct siw_pollable *p, int fd, uint32_t events)
{
	struct epoll_event ev;
	uint32_t slot;

	for (slot = 0; slot < dev->npolls; slot++) {
		if (!dev->polls[slot].p)
			break;
	}
	if (slot == dev->npolls) {
		uint32_t n = dev->npolls ? dev->npolls * 2u : 64u;
		struct siw_poll_slot *np = realloc(dev->polls, (size_t)n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		memset(np + dev->npolls, 0, (size_t)(n - dev->npolls) * sizeof(*np));
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
		return -errno;
	}
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

/* ---------------- device lock (siw.h) ---------------- */

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
 * adds ~90 instructions of cancellation bookkeeping per call). epoll_wait
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

static int siw_progress(struct rpcrdma_dev *d, int timeout_ms)
{
	struct siw_dev *dev = to_siw_dev(d);

	if (dev->thread_mode)
		return -EINVAL;
	return progress_once(dev, timeout_ms, NULL, NULL, 0, NULL);
}

static int siw_progress_poll(struct rpcrdma_dev *d, int timeout_ms, struct rpcrdma_cq *cq,
			     struct rpcrdma_wc *wc, int n, int *npolled)
{
	struct siw_dev *dev = to_siw_dev(d);

	if (dev->thread_mode)
		return -EINVAL;
	return progress_once(dev, timeout_ms, to_siw_cq(cq), wc, n, npolled);
}

static int siw_get_fd(const struct rpcrdma_dev *d)
{
	return container_of(d, const struct siw_dev, base)->epfd;
}

/* ---------------- device ---------------- */

static int epoll_add_tag(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = tag;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void dev_free(struct siw_dev *dev)
{
	if (dev->epfd >= 0)
		close(dev->epfd);
	if (dev->timerfd >= 0)
		close(dev->timerfd);
	if (dev->wakefd >= 0)
		close(dev->wakefd);
	siw_mem_fini(dev);
	free(dev->polls);
	free(dev);
}

int siw_dev_create(bool fuzz, const struct rpcrdma_dev_attr *attr, struct siw_dev **out)
{
	struct siw_dev *dev = calloc(1, sizeof(*dev));
	int rc;

	if (!dev)
		return -ENOMEM;
	futex_mutex_init(&dev->lock);
	dev->base.ops = &siw_ops;
	dev->base.name = SIW_PROVIDER_NAME;
	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	dev->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	dev->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dev->epfd < 0 || dev->timerfd < 0 || dev->wakefd < 0) {
		rc = -errno;
		dev_free(dev);
		return rc;
	}
	rc = siw_mem_init(dev);
	if (!rc)
		rc = epoll_add_tag(dev->epfd, dev->timerfd, POLL_TAG_TIMER);
	if (!rc)
		rc = epoll_add_tag(dev->epfd, dev->wakefd, POLL_TAG_WAKE);
	if (rc) {
		dev_free(dev);
		return rc;
	}
	/* STag keys differ from run to run, except for the fuzz hook which
	 * needs them reproducible */
	dev->key_seed = fuzz ? 0u : id_seed();
	/* RPCRDMA_SIW_SOLO=0: always ask epoll (A/B runs) */
	dev->solo_off = siw_env_u32("RPCRDMA_SIW_SOLO", 1, 0, 1) == 0;
	if (attr && (attr->comp_mask & RPCRDMA_DEV_ATTR_FLAGS) &&
	    (attr->flags & RPCRDMA_DEV_F_PROGRESS_THREAD)) {
		dev->thread_mode = true;
		rc = pthread_create(&dev->thread, NULL, progress_thread, dev);
		if (rc) {
			dev_free(dev);
			return -rc;
		}
	}
	*out = dev;
	return 0;
}

static int siw_close(struct rpcrdma_dev *d)
{
	struct siw_dev *dev = to_siw_dev(d);

	siw_dev_lock(dev);
	if (dev->nobjs) {
		siw_dev_unlock(dev);
		return -EBUSY;
	}
	siw_dev_unlock(dev);
	if (dev->thread_mode) {
		uint64_t one = 1;
		ssize_t r;

		__atomic_store_n(&dev->thread_stop, true, __ATOMIC_RELEASE);
		r = write(dev->wakefd, &one, sizeof(one));
		(void)r;
		pthread_join(dev->thread, NULL);
	}
	dev_free(dev);
	return 0;
}

static int siw_query(struct rpcrdma_dev *d, struct rpcrdma_dev_caps *caps)
{
	(void)d;
	strncpy(caps->provider, SIW_PROVIDER_NAME, sizeof(caps->provider) - 1);
	caps->max_mr = SIW_MAX_MR - 1u;
	caps->max_mr_size = UINT64_MAX;
	caps->max_qp_wr = SIW_MAX_QP_WR;
	caps->max_sge = SIW_MAX_SGE;
	caps->max_sge_rd = 1;
	caps->max_ird = SIW_MAX_IRD_ORD;
	caps->max_ord = SIW_MAX_IRD_ORD;
	caps->max_private_data = RPCRDMA_MAX_PRIVATE_DATA;
	caps->max_msg_size = SIW_MAX_MSG;
	return 0;
}

/* ---------------- protection domains, memory ---------------- */

static int siw_pd_alloc(struct rpcrdma_dev *d, struct rpcrdma_pd **out)
{
	struct siw_dev *dev = to_siw_dev(d);
	struct siw_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return -ENOMEM;
	pd->base.dev = d;
	siw_dev_lock(dev);
	pd->id = ++dev->next_pd_id;
	dev->nobjs++;
	siw_dev_unlock(dev);
	*out = &pd->base;
	return 0;
}

static int siw_pd_free(struct rpcrdma_pd *p)
{
	struct siw_pd *pd = to_siw_pd(p);
	struct siw_dev *dev = to_siw_dev(p->dev);

	siw_dev_lock(dev);
	if (pd->refs) {
		siw_dev_unlock(dev);
		return -EBUSY;
	}
	dev->nobjs--;
	siw_dev_unlock(dev);
	free(pd);
	return 0;
}

static int siw_mr_reg(struct rpcrdma_pd *p, void *addr, size_t length, unsigned int access,
		      struct rpcrdma_mr **out)
{
	struct siw_dev *dev = to_siw_dev(p->dev);
	struct siw_mr *mr = calloc(1, sizeof(*mr));
	int rc;

	if (!mr)
		return -ENOMEM;
	mr->base.pd = p;
	mr->pd = to_siw_pd(p);
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->len = length;
	mr->access = access;
	mr->valid = true;
	siw_dev_lock(dev);
	rc = siw_mem_add(dev, mr);
	if (!rc)
		mr->pd->refs++;
	siw_dev_unlock(dev);
	if (rc) {
		free(mr);
		return rc;
	}
	*out = &mr->base;
	return 0;
}

static int siw_mr_rereg(struct rpcrdma_mr *m, void *addr, size_t length, unsigned int access)
{
	struct siw_mr *mr = to_siw_mr(m);
	struct siw_dev *dev = to_siw_dev(m->pd->dev);

	siw_dev_lock(dev);
	/* RFC 5042 §5.3: same index, new key */
	mr->stag = (mr->stag & ~0xffu) | siw_mem_next_key(dev, (uint8_t)mr->stag);
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->len = length;
	mr->access = access;
	mr->valid = true;
	siw_dev_unlock(dev);
	return 0;
}

static int siw_mr_invalidate(struct rpcrdma_mr *m)
{
	struct siw_dev *dev = to_siw_dev(m->pd->dev);

	siw_dev_lock(dev);
	to_siw_mr(m)->valid = false;
	siw_dev_unlock(dev);
	return 0;
}

static int siw_mr_dereg(struct rpcrdma_mr *m)
{
	struct siw_mr *mr = to_siw_mr(m);
	struct siw_dev *dev = to_siw_dev(m->pd->dev);

	siw_dev_lock(dev);
	siw_mem_del(dev, mr);
	dev->mr_gen++; /* drops every endpoint's cached MR (qp_tx.c) */
	mr->pd->refs--;
	siw_dev_unlock(dev);
	free(mr);
	return 0;
}

static uint32_t siw_mr_stag(const struct rpcrdma_mr *m)
{
	return container_of(m, const struct siw_mr, base)->stag;
}

static bool siw_mr_valid(const struct rpcrdma_mr *m)
{
	return container_of(m, const struct siw_mr, base)->valid;
}

static uint64_t siw_mr_offset(const struct rpcrdma_mr *m)
{
	return container_of(m, const struct siw_mr, base)->addr;
}

static size_t siw_mr_length(const struct rpcrdma_mr *m)
{
	return (size_t)container_of(m, const struct siw_mr, base)->len;
}

/* ---------------- endpoints ---------------- */

static uint32_t attr_or(uint32_t mask, uint32_t bit, uint32_t v, uint32_t def)
{
	return (mask & bit) ? v : def;
}

uint32_t siw_env_u32(const char *name, uint32_t def, uint32_t min, uint32_t max)
{
	const char *e = getenv(name);
	char *end;
	unsigned long v;

	if (!e || !*e)
		return def;
	errno = 0;
	v = strtoul(e, &end, 0);
	if (errno || *end || v < min || v > max)
		return def;
	return (uint32_t)v;
}

int siw_ep_init(struct siw_dev *dev, struct siw_pd *pd, const struct rpcrdma_ep_attr *attr,
		struct siw_ep **out)
{
	uint32_t m = attr->comp_mask;
	struct siw_ep *ep;

	uint32_t swr = attr_or(m, RPCRDMA_EP_ATTR_CAPS, attr->max_send_wr, SIW_DEF_WR);
	uint32_t rwr = attr_or(m, RPCRDMA_EP_ATTR_CAPS, attr->max_recv_wr, SIW_DEF_WR);
	uint32_t ssge = attr_or(m, RPCRDMA_EP_ATTR_CAPS, attr->max_send_sge, SIW_DEF_SGE);
	uint32_t rsge = attr_or(m, RPCRDMA_EP_ATTR_CAPS, attr->max_recv_sge, SIW_DEF_SGE);
	uint32_t ird = attr_or(m, RPCRDMA_EP_ATTR_IRD_ORD, attr->ird, SIW_DEF_IRD_ORD);
	uint32_t ord = attr_or(m, RPCRDMA_EP_ATTR_IRD_ORD, attr->ord, SIW_DEF_IRD_ORD);
	uint32_t ulpdu = attr_or(m, RPCRDMA_EP_ATTR_MAX_ULPDU, attr->max_ulpdu, SIW_DEF_ULPDU);

	if (!swr || !rwr || swr > SIW_MAX_QP_WR || rwr > SIW_MAX_QP_WR || ssge > SIW_MAX_SGE ||
	    rsge > SIW_MAX_SGE || ird > SIW_MAX_IRD_ORD || ord > SIW_MAX_IRD_ORD)
		return -EINVAL;
	if ((m & RPCRDMA_EP_ATTR_MPA_REV) && attr->mpa_rev != MPA_REV1 && attr->mpa_rev != MPA_REV2)
		return -EINVAL;
	if ((m & RPCRDMA_EP_ATTR_RTR) && attr->rtr != RPCRDMA_RTR_NONE &&
	    attr->rtr != RPCRDMA_RTR_WRITE && attr->rtr != RPCRDMA_RTR_READ)
		return -EINVAL;
	if (ulpdu < SIW_MIN_ULPDU)
		ulpdu = SIW_MIN_ULPDU;
	if (ulpdu > MPA_MAX_ULPDU)
		ulpdu = MPA_MAX_ULPDU;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	/* every work slot up front: nothing is allocated per request
	 * (products bounded by SIW_MAX_QP_WR * SIW_MAX_SGE) */
	ep->sq = calloc(swr, sizeof(*ep->sq));
	ep->sq_sge = calloc((size_t)swr * (ssge ? ssge : 1u), sizeof(*ep->sq_sge));
	ep->rq = calloc(rwr, sizeof(*ep->rq));
	ep->rq_sge = calloc((size_t)rwr * (rsge ? rsge : 1u), sizeof(*ep->rq_sge));
	ep->orq_cap = ord ? ord : 1u;
	ep->irq_cap = ird ? ird : 1u;
	ep->orq = calloc(ep->orq_cap, sizeof(*ep->orq));
	ep->irq = calloc(ep->irq_cap, sizeof(*ep->irq));
	if (!ep->sq || !ep->sq_sge || !ep->rq || !ep->rq_sge || !ep->orq || !ep->irq) {
		siw_ep_free(ep);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < swr; i++)
		ep->sq[i].sge = &ep->sq_sge[(size_t)i * (ssge ? ssge : 1u)];
	for (uint32_t i = 0; i < rwr; i++)
		ep->rq[i].sge = &ep->rq_sge[(size_t)i * (rsge ? rsge : 1u)];
	ep->base.dev = &dev->base;
	ep->base.pd = &pd->base;
	if (m & RPCRDMA_EP_ATTR_CONTEXT)
		ep->base.context = attr->context;
	ep->poll.kind = SIW_POLL_EP;
	ep->dev = dev;
	ep->pd = pd;
	ep->fd = -1;
	ep->max_send_wr = swr;
	ep->max_recv_wr = rwr;
	ep->max_send_sge = ssge;
	ep->max_recv_sge = rsge;
	ep->ird = ird;
	ep->ord = ord;
	ep->eff_ord = ord;
	ep->max_ulpdu = ulpdu;
	ep->timeout_ms =
	    attr_or(m, RPCRDMA_EP_ATTR_TIMEOUT, attr->connect_timeout_ms, SIW_DEF_TIMEOUT);
	/* unset: RPCRDMA_SIW_SOCKBUF (bytes, 0 = the kernel's autotuning),
	 * for measuring (bench/provider/README.md) */
	ep->sockbuf = (m & RPCRDMA_EP_ATTR_SOCKBUF)
			  ? attr->sockbuf
			  : siw_env_u32("RPCRDMA_SIW_SOCKBUF", SIW_DEF_SOCKBUF, 0, 256u << 20);
	ep->tx_cap = SIW_TX_BYTES; /* siw_ep_enter_rts() may override */
	ep->tx_cap_crc = SIW_TX_BYTES_CRC;
	ep->tx_cap_rresp = SIW_TX_RRESP_BYTES;
	ep->want_crc = (m & RPCRDMA_EP_ATTR_CRC) ? attr->mpa_crc : true;
	ep->want_rev = (m & RPCRDMA_EP_ATTR_MPA_REV) ? attr->mpa_rev : (uint8_t)MPA_REV2;
	ep->want_rtr = (m & RPCRDMA_EP_ATTR_RTR) ? attr->rtr : RPCRDMA_RTR_NONE;
	ep->rev = ep->want_rev;
	for (int i = 0; i < 3; i++)
		ep->tx_msn[i] = ep->rx_msn[i] = 1; /* RFC 5041 §5.1: MSN starts at 1 */
	ep->rx.state = SIW_RX_DEAD;
	ep->state = SIW_EP_IDLE;
	if (attr->send_cq) {
		ep->scq = to_siw_cq(attr->send_cq);
		ep->rcq = to_siw_cq(attr->recv_cq);
		ep->scq->refs++;
		ep->rcq->refs++;
	}
	if (attr->evch) {
		ep->evch = to_siw_evch(attr->evch);
		ep->evch->refs++;
	}
	pd->refs++;
	dev->nobjs++;
	ep->next = dev->eps;
	dev->eps = ep;
	*out = ep;
	return 0;
}

void siw_ep_free(struct siw_ep *ep)
{
	free(ep->sq);
	free(ep->sq_sge);
	free(ep->rq);
	free(ep->rq_sge);
	free(ep->orq);
	free(ep->irq);
	free(ep->rx.replay);
	free(ep);
}

static int siw_ep_create(struct rpcrdma_pd *p, const struct rpcrdma_ep_attr *attr,
			 struct rpcrdma_ep **out)
{
	struct siw_dev *dev = to_siw_dev(p->dev);
	struct siw_ep *ep;
	int rc;

	siw_dev_lock(dev);
	rc = siw_ep_init(dev, to_siw_pd(p), attr, &ep);
	siw_dev_unlock(dev);
	if (!rc)
		*out = &ep->base;
	return rc;
}

static int siw_ep_destroy(struct rpcrdma_ep *e)
{
	struct siw_ep *ep = to_siw_ep(e);
	struct siw_dev *dev = ep->dev;

	siw_dev_lock(dev);
	if (ep->fd >= 0)
		siw_ep_close_socket(ep, true);
	ep->state = SIW_EP_CLOSED;
	siw_ep_flush(ep, RPCRDMA_WC_WR_FLUSH_ERR, 0);
	if (ep->tx_deferred) {
		ep->tx_deferred = false;
		__atomic_store_n(&dev->ndeferred, dev->ndeferred - 1u, __ATOMIC_RELAXED);
	}
	for (struct siw_ep **pp = &dev->eps; *pp; pp = &(*pp)->next) {
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	}
	if (ep->scq) {
		ep->scq->refs--;
		ep->rcq->refs--;
	}
	if (ep->evch)
		ep->evch->refs--;
	ep->pd->refs--;
	dev->nobjs--;
	siw_timer_rearm(dev);
	siw_dev_unlock(dev);
	siw_ep_free(ep);
	return 0;
}

static int siw_ep_query_stats(struct rpcrdma_ep *e, struct rpcrdma_ep_stats *st)
{
	struct siw_ep *ep = to_siw_ep(e);

	siw_dev_lock(ep->dev);
	*st = ep->stats;
	siw_dev_unlock(ep->dev);
	return 0;
}

static int siw_ep_query_conn(struct rpcrdma_ep *e, struct rpcrdma_ep_conn_info *ci)
{
	struct siw_ep *ep = to_siw_ep(e);
	int rc = 0;

	siw_dev_lock(ep->dev);
	if (ep->state != SIW_EP_RTS && ep->state != SIW_EP_CLOSING) {
		rc = -ENOTCONN;
	} else {
		ci->mpa_rev = ep->rev;
		ci->crc = ep->crc;
		ci->rtr = ep->rtr;
		ci->ird = ep->ird;
		ci->ord = ep->eff_ord;
		ci->max_ulpdu = ep->max_ulpdu;
		ci->local = ep->local;
		ci->peer = ep->peer;
	}
	siw_dev_unlock(ep->dev);
	return rc;
}

static int siw_connect(struct rpcrdma_ep *e, const struct sockaddr *addr, socklen_t addrlen,
		       const void *pdata, size_t len)
{
	struct siw_ep *ep = to_siw_ep(e);
	int rc;

	siw_dev_lock(ep->dev);
	rc = siw_cm_connect(ep, addr, addrlen, pdata, len);
	siw_dev_unlock(ep->dev);
	return rc;
}

static int siw_listen(struct rpcrdma_dev *d, struct rpcrdma_evch *evch, const struct sockaddr *addr,
		      socklen_t addrlen, int backlog, void *context, struct rpcrdma_listener **out)
{
	struct siw_dev *dev = to_siw_dev(d);
	struct siw_listener *l;
	int rc;

	siw_dev_lock(dev);
	rc = siw_cm_listen(dev, to_siw_evch(evch), addr, addrlen, backlog, context, &l);
	siw_dev_unlock(dev);
	if (!rc)
		*out = &l->base;
	return rc;
}

static int siw_listener_destroy(struct rpcrdma_listener *lb)
{
	struct siw_listener *l = container_of(lb, struct siw_listener, base);
	struct siw_dev *dev = l->dev;

	siw_dev_lock(dev);
	siw_cm_listener_destroy(l);
	siw_dev_unlock(dev);
	return 0;
}

static int siw_listener_addr(const struct rpcrdma_listener *lb, struct sockaddr_storage *addr)
{
	const struct siw_listener *l = container_of(lb, const struct siw_listener, base);
	socklen_t sl = sizeof(*addr);

	return getsockname(l->fd, (struct sockaddr *)addr, &sl) < 0 ? -errno : 0;
}

static int siw_accept(struct rpcrdma_conn_req *r, struct rpcrdma_ep *e, const void *pdata,
		      size_t len)
{
	struct siw_creq *req = container_of(r, struct siw_creq, base);
	struct siw_dev *dev = req->dev;
	int rc;

	siw_dev_lock(dev);
	rc = siw_cm_accept(req, to_siw_ep(e), pdata, len);
	siw_dev_unlock(dev);
	return rc;
}

static int siw_reject(struct rpcrdma_conn_req *r, const void *pdata, size_t len)
{
	struct siw_creq *req = container_of(r, struct siw_creq, base);
	struct siw_dev *dev = req->dev;
	int rc;

	siw_dev_lock(dev);
	rc = siw_cm_reject(req, pdata, len);
	siw_dev_unlock(dev);
	return rc;
}

static int siw_disconnect(struct rpcrdma_ep *e)
{
	struct siw_ep *ep = to_siw_ep(e);

	siw_dev_lock(ep->dev);
	if (ep->state == SIW_EP_RTS || ep->state == SIW_EP_MPA_REP_SENT) {
		/* Orderly release: hand TCP what fits now, then FIN after it
		 * (a close() with unread input would send RST, which can
		 * destroy data still in flight to the peer). Outstanding work
		 * is flushed at once; DISCONNECTED comes when the peer has
		 * closed too, or after a second. */
		(void)siw_tx_process(ep);
		if (ep->fd >= 0) {
			shutdown(ep->fd, SHUT_WR);
			ep->state = SIW_EP_CLOSING;
			ep->rx.state = SIW_RX_DEAD;
			siw_ep_flush(ep, RPCRDMA_WC_WR_FLUSH_ERR, 0);
			ep->tx.left = 0;
			ep->tx.iov_n = ep->tx.iov_i = 0;
			ep->deadline_ms = siw_now_ms() + 1000u;
			siw_timer_rearm(ep->dev);
		}
	} else if (ep->state != SIW_EP_CLOSED && ep->state != SIW_EP_IDLE &&
		   ep->state != SIW_EP_CLOSING) {
		siw_ep_fail(ep, 0, RPCRDMA_WC_WR_FLUSH_ERR, 0);
	}
	siw_dev_unlock(ep->dev);
	return 0;
}

/* ---------------- work requests ---------------- */

static bool ep_dead(const struct siw_ep *ep)
{
	return ep->state == SIW_EP_ERROR || ep->state == SIW_EP_CLOSED ||
	       ep->state == SIW_EP_CLOSING;
}

/* Post one receive, device lock held. */
static inline int post_recv_locked(struct siw_ep *ep, uint64_t wr_id, const struct rpcrdma_sge *sg,
				   unsigned int num_sge)
{
	struct siw_rqe *r;
	uint64_t len = 0;

	if (num_sge > ep->max_recv_sge || (num_sge && !sg))
		return -EINVAL;
	if (ep->used && ep_dead(ep)) {
		struct siw_rqe tmp = {.wr_id = wr_id};

		(void)siw_rq_complete(ep, &tmp, RPCRDMA_WC_WR_FLUSH_ERR, 0, 0, 0);
		return 0;
	}
	if (ep->rq_tail - ep->rq_head >= ep->max_recv_wr)
		return -ENOMEM;
	r = &ep->rq[ep->rq_tail % ep->max_recv_wr];
	r->wr_id = wr_id;
	r->num_sge = num_sge;
	for (unsigned int i = 0; i < num_sge; i++) {
		r->sge[i] = sg[i]; /* usually one: no memcpy call */
		len += sg[i].length;
	}
	r->len = len;
	ep->rq_tail++;
	return 0;
}

static int siw_post_recv(struct rpcrdma_ep *e, uint64_t wr_id, const struct rpcrdma_sge *sg,
			 unsigned int num_sge)
{
	struct siw_ep *ep = to_siw_ep(e);
	int rc;

	siw_dev_lock(ep->dev);
	rc = post_recv_locked(ep, wr_id, sg, num_sge);
	siw_dev_unlock(ep->dev);
	return rc;
}

/* The checks of a send work request that need no lock; *@len: its bytes. */
static int send_check(const struct siw_ep *ep, const struct rpcrdma_send_wr *wr, uint64_t *len)
{
	uint64_t n = 0;

	if ((unsigned)wr->opcode > RPCRDMA_WR_RDMA_READ ||
	    (wr->flags &
	     ~(uint32_t)(RPCRDMA_SEND_SIGNALED | RPCRDMA_SEND_SOLICITED | RPCRDMA_SEND_INVALIDATE |
			 RPCRDMA_SEND_FENCE | RPCRDMA_SEND_DEFER)) ||
	    ((wr->flags & (RPCRDMA_SEND_INVALIDATE | RPCRDMA_SEND_SOLICITED)) &&
	     wr->opcode != RPCRDMA_WR_SEND) ||
	    wr->num_sge > ep->max_send_sge ||
	    (wr->opcode == RPCRDMA_WR_RDMA_READ && wr->num_sge > 1))
		return -EINVAL;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		n += wr->sg[i].length;
	if (n > SIW_MAX_MSG)
		return -EINVAL;
	*len = n;
	return 0;
}

/* Post a checked send work request of @len bytes, device lock held. */
static inline int post_send_locked(struct siw_ep *ep, const struct rpcrdma_send_wr *wr,
				   uint64_t len)
{
	struct siw_wqe *w;
	ssize_t sent;

	if (!ep->used)
		return -ENOTCONN;
	/* A lone Send on an idle connection: straight to TCP (qp_tx.c);
	 * queued below only if TCP did not take all of it. Its completion
	 * (signaled) follows every earlier one: the send queue is empty. */
	sent = siw_tx_direct(ep, wr, len);
	if (sent == 0) {
		if (wr->flags & RPCRDMA_SEND_SIGNALED) {
			struct rpcrdma_wc wc = {
			    .wr_id = wr->wr_id,
			    .status = RPCRDMA_WC_SUCCESS,
			    .opcode = RPCRDMA_WC_SEND,
			    .byte_len = (uint32_t)len,
			    .ep = &ep->base,
			};

			if (siw_cq_push(ep->dev, ep->scq, &wc)) {
				ep->cq_overrun = true;
				siw_ep_check_overrun(ep);
			}
		}
		return 0;
	}
	if (ep->sq_tail - ep->sq_head >= ep->max_send_wr)
		return -ENOMEM;
	w = &ep->sq[ep->sq_tail % ep->max_send_wr];
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->flags = wr->flags & ~(uint32_t)RPCRDMA_SEND_DEFER;
	w->num_sge = wr->num_sge;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		w->sge[i] = wr->sg[i]; /* one or two: no memcpy call */
	w->inv_stag = wr->invalidate_stag;
	w->rstag = wr->remote_stag;
	w->raddr = wr->remote_offset;
	w->len = len;
	w->read_got = 0;
	w->status = RPCRDMA_WC_SUCCESS;
	w->vendor_err = 0;
	w->state = SIW_WQE_QUEUED;
	ep->sq_tail++;
	if (ep_dead(ep)) {
		/* completes at once with a flush status */
		ep->sq_tx = ep->sq_tail;
		w->status = RPCRDMA_WC_WR_FLUSH_ERR;
		w->state = SIW_WQE_DONE;
		siw_sq_retire(ep);
	} else if (wr->flags & RPCRDMA_SEND_DEFER) {
		/* held: the next post, rpcrdma_ep_flush() or progress pushes it
		 * together with whatever follows (one sendmsg) */
		if (!ep->tx_deferred) {
			ep->tx_deferred = true;
			__atomic_store_n(&ep->dev->ndeferred, ep->dev->ndeferred + 1u,
					 __ATOMIC_RELAXED);
		}
	} else if (sent > 0) {
		siw_tx_direct_rest(ep, (uint64_t)sent);
		if (ep->cq_overrun)
			siw_ep_check_overrun(ep);
	} else if (ep->state == SIW_EP_RTS && !ep->tx.blocked) {
		(void)siw_tx_process(ep);
		if (ep->cq_overrun)
			siw_ep_check_overrun(ep);
	}
	return 0;
}

static int siw_post_send(struct rpcrdma_ep *e, const struct rpcrdma_send_wr *wr)
{
	struct siw_ep *ep = to_siw_ep(e);
	uint64_t len;
	int rc = send_check(ep, wr, &len);

	if (rc)
		return rc;
	siw_dev_lock(ep->dev);
	rc = post_send_locked(ep, wr, len);
	siw_dev_unlock(ep->dev);
	return rc;
}

/* rpcrdma_post_send_recv(): the receives and the Send in one lock round
 * (a requester's repost of a used receive travels with its next call). */
static int siw_post_send_recv(struct rpcrdma_ep *e, const struct rpcrdma_send_wr *wr,
			      const struct rpcrdma_recv_wr *rwr, unsigned int nrwr,
			      unsigned int *nposted)
{
	struct siw_ep *ep = to_siw_ep(e);
	uint64_t len = 0;
	int rc = 0, src = wr ? send_check(ep, wr, &len) : 0;
	unsigned int i;

	siw_dev_lock(ep->dev);
	for (i = 0; i < nrwr; i++) {
		rc = post_recv_locked(ep, rwr[i].wr_id, rwr[i].sg, rwr[i].num_sge);
		if (rc)
			break;
	}
	if (!rc && wr)
		rc = src ? src : post_send_locked(ep, wr, len);
	siw_dev_unlock(ep->dev);
	if (nposted)
		*nposted = i;
	return rc;
}

static int siw_doorbell(struct rpcrdma_ep *e)
{
	struct siw_ep *ep = to_siw_ep(e);

	siw_dev_lock(ep->dev);
	if (ep->tx_deferred) {
		if (ep->state == SIW_EP_RTS && !ep->tx.blocked) {
			(void)siw_tx_process(ep);
			if (ep->cq_overrun)
				siw_ep_check_overrun(ep);
		} else {
			/* not connected yet / socket full: starts with the
			 * connection or EPOLLOUT, as any queued work */
			ep->tx_deferred = false;
			__atomic_store_n(&ep->dev->ndeferred, ep->dev->ndeferred - 1u,
					 __ATOMIC_RELAXED);
		}
	}
	siw_dev_unlock(ep->dev);
	return 0;
}

/* ---------------- ops table, provider ---------------- */

struct rpcrdma_dev_ops siw_ops = {
    .close = siw_close,
    .query = siw_query,
    .get_fd = siw_get_fd,
    .progress = siw_progress,
    .pd_alloc = siw_pd_alloc,
    .pd_free = siw_pd_free,
    .mr_reg = siw_mr_reg,
    .mr_rereg = siw_mr_rereg,
    .mr_invalidate = siw_mr_invalidate,
    .mr_dereg = siw_mr_dereg,
    .mr_stag = siw_mr_stag,
    .mr_valid = siw_mr_valid,
    .mr_offset = siw_mr_offset,
    .mr_length = siw_mr_length,
    .cq_create = siw_cq_create,
    .cq_destroy = siw_cq_destroy,
    .cq_poll = siw_cq_poll,
    .cq_req_notify = siw_cq_req_notify,
    .cq_get_fd = siw_cq_get_fd,
    .cq_ack_notify = siw_cq_ack_notify,
    .evch_create = siw_evch_create,
    .evch_destroy = siw_evch_destroy,
    .evch_get = siw_evch_get,
    .evch_get_fd = siw_evch_get_fd,
    .ep_create = siw_ep_create,
    .ep_destroy = siw_ep_destroy,
    .ep_query_stats = siw_ep_query_stats,
    .ep_query_conn = siw_ep_query_conn,
    .connect = siw_connect,
    .listen = siw_listen,
    .listener_destroy = siw_listener_destroy,
    .listener_addr = siw_listener_addr,
    .accept = siw_accept,
    .reject = siw_reject,
    .disconnect = siw_disconnect,
    .post_recv = siw_post_recv,
    .post_send = siw_post_send,
    .post_send_recv = siw_post_send_recv,
    .ep_flush = siw_doorbell,
    .progress_poll = siw_progress_poll,
};

static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static void ops_init(void)
{
	rpcrdma_prov_fill_dummies(&siw_ops);
}

static int siw_open(const struct rpcrdma_dev_attr *attr, struct rpcrdma_dev **out)
{
	struct siw_dev *dev = NULL;
	int rc;

	pthread_once(&ops_once, ops_init);
	rc = siw_dev_create(false, attr, &dev);
	if (!rc && dev)
		*out = &dev->base;
	return rc;
}

const struct rpcrdma_provider rpcrdma_softiwarp_provider = {
    .name = SIW_PROVIDER_NAME,
    .open = siw_open,
};
