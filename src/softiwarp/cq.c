/* SPDX-License-Identifier: MIT */
/*
 * Completion queues and connection event channels.
 *
 * A CQ is a ring preallocated to its capacity: pushing a completion never
 * allocates. Its fd is an eventfd written when an armed CQ gets a
 * completion (one-shot arming, like ibv_req_notify_cq). An event channel
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

int siw_cq_push(struct siw_dev *dev, struct siw_cq *cq, const struct rpcrdma_wc *wc)
{
	if (cq == dev->reap_cq && !cq->count && dev->reap_n < dev->reap_cap) {
		/* the progress pass that reaps this CQ takes it at once: in
		 * order, as nothing older waits in the ring */
		dev->reap_wc[dev->reap_n++] = *wc;
	} else {
		if (cq->count == cq->cap)
			return -ENOSPC;
		cq->ring[(cq->head + cq->count) % cq->cap] = *wc;
		/* read without the lock by siw_cq_poll() */
		__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELAXED);
	}
	dev->produced++;
	if (cq->armed && (!cq->solicited_only || wc->status != RPCRDMA_WC_SUCCESS ||
			  (wc->wc_flags & RPCRDMA_WC_F_SOLICITED))) {
		cq->armed = false;
		if (!cq->fd_signaled) {
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

	if (attr->cqe > (1u << 24))
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->ring = calloc(attr->cqe, sizeof(*cq->ring));
	cq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!cq->ring || cq->efd < 0) {
		int rc = cq->efd < 0 ? -errno : -ENOMEM;

		if (cq->efd >= 0)
			close(cq->efd);
		free(cq->ring);
		free(cq);
		return rc;
	}
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
		cq->head = cq->head + 1u == cq->cap ? 0u : cq->head + 1u;
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

	siw_dev_lock(dev);
	cq->armed = true;
	cq->solicited_only = solicited_only;
	siw_dev_unlock(dev);
	return 0;
}

int siw_cq_get_fd(const struct rpcrdma_cq *c)
{
	return container_of(c, const struct siw_cq, base)->efd;
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
