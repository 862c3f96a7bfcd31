/* SPDX-License-Identifier: MIT */
/*
 * Completion queues and connection event channels.
 *
 * A CQ is a ring that starts small and doubles, up to its capacity, when a
 * completion finds it full (siw_cq_grow): a server with one CQ per
 * connection, or one CQ for thousands, holds memory for the completions
 * that wait at once, not for the capacity. Growing is the only allocation
 * of a push, and rare (the ring keeps its size). Its fd is an eventfd,
 * made when first asked for or armed, written when an armed CQ gets a
 * completion (one-shot arming, like ibv_req_notify_cq): CQs nobody waits
 * on cost no descriptor. An event channel
 * is a list of heap nodes (events are rare) with an eventfd that stays
 * readable while events are queued.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "softiwarp/siw.h"

static void efd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t r = write(fd, &one, sizeof(one));

	(void)r; /* an eventfd counter cannot overflow here */
}

static void efd_drain(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof(v));

	(void)r; /* -EAGAIN when already drained */
}

/* The first ring: this many entries at most (768 bytes). */
#define SIW_CQ_RING0 16u

/* Device lock held: a full ring doubles (up to cap), its entries moved to
 * the front in order. -ENOSPC at capacity or without memory. */
static int siw_cq_grow(struct siw_cq *cq)
{
	uint32_t n = cq->ring_n > cq->cap / 2 ? cq->cap : cq->ring_n * 2;
	struct rpcrdma_wc *r;

	if (cq->ring_n >= cq->cap || !n)
		return -ENOSPC;
	r = malloc((size_t)n * sizeof(*r));
	if (!r)
		return -ENOSPC;
	for (uint32_t i = 0; i < cq->count; i++)
		r[i] = cq->ring[(cq->head + i) % cq->ring_n];
	free(cq->ring);
	cq->ring = r;
	cq->ring_n = n;
	cq->head = 0;
	return 0;
}

/* Device lock held: the eventfd, made on first use. */
static int siw_cq_efd(struct siw_cq *cq)
{
	if (cq->efd < 0) {
		cq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (cq->efd < 0)
			return -errno;
	}
	return cq->efd;
}

int siw_cq_push(struct siw_dev *dev, struct siw_cq *cq, const struct rpcrdma_wc *wc)
{
	if (cq == dev->reap_cq && !cq->count && dev->reap_n < dev->reap_cap) {
		/* the progress pass that reaps this CQ takes it at once: in
		 * order, as nothing older waits in the ring */
		dev->reap_wc[dev->reap_n++] = *wc;
	} else {
		if (cq->count == cq->ring_n && siw_cq_grow(cq))
			return -ENOSPC;
		cq->ring[(cq->head + cq->count) % cq->ring_n] = *wc;
		/* read without the lock by siw_cq_poll() */
		__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELAXED);
	}
	dev->produced++;
	if (cq->armed && (!cq->solicited_only || wc->status != RPCRDMA_WC_SUCCESS ||
			  (wc->wc_flags & RPCRDMA_WC_F_SOLICITED))) {
		cq->armed = false;
		if (!cq->fd_signaled && cq->efd >= 0) {
			cq->fd_signaled = true;
			efd_signal(cq->efd);
		}
	}
	return 0;
}

int siw_cq_create(struct rpcrdma_dev *d, const struct rpcrdma_cq_attr *attr,
		  struct rpcrdma_cq **out)
{
	struct siw_dev *dev = to_siw_dev(d);
	struct siw_cq *cq;

	if (attr->cqe > SIW_MAX_CQE)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->ring_n = attr->cqe < SIW_CQ_RING0 ? attr->cqe : SIW_CQ_RING0;
	cq->ring = malloc((size_t)cq->ring_n * sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -ENOMEM;
	}
	cq->efd = -1;
	cq->cap = attr->cqe;
	cq->base.dev = d;
	if (attr->comp_mask & RPCRDMA_CQ_ATTR_CONTEXT)
		cq->base.context = attr->context;
	siw_dev_lock(dev);
	dev->nobjs++;
	siw_dev_unlock(dev);
	*out = &cq->base;
	return 0;
}

int siw_cq_destroy(struct rpcrdma_cq *c)
{
	struct siw_cq *cq = to_siw_cq(c);
	struct siw_dev *dev = to_siw_dev(c->dev);

	siw_dev_lock(dev);
	if (cq->refs) {
		siw_dev_unlock(dev);
		return -EBUSY;
	}
	dev->nobjs--;
	siw_dev_unlock(dev);
	if (cq->efd >= 0)
		close(cq->efd);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Device lock held. */
int siw_cq_take(struct siw_cq *cq, struct rpcrdma_wc *wc, int n)
{
	int got = 0;

	while (got < n && cq->count) {
		wc[got++] = cq->ring[cq->head];
		cq->head = cq->head + 1u == cq->ring_n ? 0u : cq->head + 1u;
		__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
	}
	return got;
}

int siw_cq_poll(struct rpcrdma_cq *c, struct rpcrdma_wc *wc, int n)
{
	struct siw_cq *cq = to_siw_cq(c);
	struct siw_dev *dev = to_siw_dev(c->dev);
	int got;

	/* An empty ring costs no lock round (the common idle poll): a
	 * completion pushed meanwhile is found by the next poll, as if this
	 * one had come a moment earlier. */
	if (!__atomic_load_n(&cq->count, __ATOMIC_RELAXED))
		return 0;
	siw_dev_lock(dev);
	got = siw_cq_take(cq, wc, n);
	siw_dev_unlock(dev);
	return got;
}

int siw_cq_req_notify(struct rpcrdma_cq *c, bool solicited_only)
{
	struct siw_cq *cq = to_siw_cq(c);
	struct siw_dev *dev = to_siw_dev(c->dev);

	int rc;

	siw_dev_lock(dev);
	rc = siw_cq_efd(cq); /* arming promises a signal there */
	if (rc >= 0) {
		cq->armed = true;
		cq->solicited_only = solicited_only;
	}
	siw_dev_unlock(dev);
	return rc < 0 ? rc : 0;
}

int siw_cq_get_fd(const struct rpcrdma_cq *c)
{
	/* the CQ itself is never const: the fd is made on demand */
	struct siw_cq *cq = container_of((struct rpcrdma_cq *)(uintptr_t)c, struct siw_cq, base);
	struct siw_dev *dev = to_siw_dev(c->dev);
	int fd;

	siw_dev_lock(dev);
	fd = siw_cq_efd(cq);
	siw_dev_unlock(dev);
	return fd;
}

/* rpcrdma_cq_resize(): only the capacity moves (the ring follows the
 * completions waiting); never below what waits now. */
int siw_cq_resize(struct rpcrdma_cq *c, uint32_t cqe)
{
	struct siw_cq *cq = to_siw_cq(c);
	struct siw_dev *dev = to_siw_dev(c->dev);
	int rc = 0;

	if (!cqe || cqe > SIW_MAX_CQE)
		return -EINVAL;
	siw_dev_lock(dev);
	/* keep it simple: shrink the ring only when empty */
	if (cqe < cq->count || (cqe < cq->ring_n && cq->count))
		rc = -EBUSY;
	else
		cq->cap = cqe;
	if (!rc && cq->ring_n > cqe) {
		cq->ring_n = cqe; /* empty: the first cqe entries serve */
		cq->head = 0;
	}
	siw_dev_unlock(dev);
	return rc;
}

int siw_cq_ack_notify(struct rpcrdma_cq *c)
{
	struct siw_cq *cq = to_siw_cq(c);
	struct siw_dev *dev = to_siw_dev(c->dev);

	siw_dev_lock(dev);
	if (cq->fd_signaled) {
		cq->fd_signaled = false;
		efd_drain(cq->efd);
	}
	siw_dev_unlock(dev);
	return 0;
}

int siw_evch_push(struct siw_dev *dev, struct siw_evch *ch, const struct rpcrdma_event *ev)
{
	struct siw_ev_node *n = malloc(sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->next = NULL;
	n->ev = *ev;
	if (ch->tail)
		ch->tail->next = n;
	else
		ch->head = n;
	ch->tail = n;
	dev->produced++;
	if (!ch->fd_signaled) {
		ch->fd_signaled = true;
		efd_signal(ch->efd);
	}
	return 0;
}

/* Device lock held: drop the events of @e not read yet. The endpoint's
 * memory may be handed to the next endpoint created, and a late event of
 * this one (a DISCONNECTED nobody read because the connection's loss was
 * seen as flushed completions first) would then be taken for the new
 * endpoint's (as rdma_destroy_id() discards the events of its id). */
void siw_evch_purge(struct siw_evch *ch, const struct rpcrdma_ep *e)
{
	struct siw_ev_node **pp = &ch->head, *n;

	ch->tail = NULL;
	while ((n = *pp)) {
		if (n->ev.ep == e) {
			*pp = n->next;
			free(n);
			continue;
		}
		ch->tail = n;
		pp = &n->next;
	}
	if (!ch->head && ch->fd_signaled) {
		ch->fd_signaled = false;
		efd_drain(ch->efd);
	}
}

int siw_evch_create(struct rpcrdma_dev *d, const struct rpcrdma_evch_attr *attr,
		    struct rpcrdma_evch **out)
{
	struct siw_dev *dev = to_siw_dev(d);
	struct siw_evch *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return -ENOMEM;
	ch->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch->efd < 0) {
		int rc = -errno;

		free(ch);
		return rc;
	}
	ch->base.dev = d;
	if (attr && (attr->comp_mask & RPCRDMA_EVCH_ATTR_CONTEXT))
		ch->base.context = attr->context;
	siw_dev_lock(dev);
	dev->nobjs++;
	siw_dev_unlock(dev);
	*out = &ch->base;
	return 0;
}

int siw_evch_destroy(struct rpcrdma_evch *c)
{
	struct siw_evch *ch = to_siw_evch(c);
	struct siw_dev *dev = to_siw_dev(c->dev);
	struct siw_ev_node *n;

	siw_dev_lock(dev);
	if (ch->refs) {
		siw_dev_unlock(dev);
		return -EBUSY;
	}
	dev->nobjs--;
	siw_dev_unlock(dev);
	while ((n = ch->head)) {
		ch->head = n->next;
		free(n);
	}
	close(ch->efd);
	free(ch);
	return 0;
}

int siw_evch_get(struct rpcrdma_evch *c, struct rpcrdma_event *ev)
{
	struct siw_evch *ch = to_siw_evch(c);
	struct siw_dev *dev = to_siw_dev(c->dev);
	struct siw_ev_node *n;

	siw_dev_lock(dev);
	n = ch->head;
	if (n) {
		ch->head = n->next;
		if (!ch->head) {
			ch->tail = NULL;
			if (ch->fd_signaled) {
				ch->fd_signaled = false;
				efd_drain(ch->efd);
			}
		}
	}
	siw_dev_unlock(dev);
	if (!n)
		return -EAGAIN;
	*ev = n->ev;
	free(n);
	return 0;
}

int siw_evch_get_fd(const struct rpcrdma_evch *c)
{
	return container_of(c, const struct siw_evch, base)->efd;
}
