/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's completion queues and connection event channels.
 *
 * A CQ is an ibv_cq with a completion channel of its own (its fd is in the
 * device's epoll set, and is rpcrdma_cq_fd()) plus a ring of translated
 * completions: what progress took from the hardware, and completions made
 * up for work that never reached the hardware (flushed while held).
 *
 * An event channel is a queue of rpcrdma_event filled by cm.c, with an
 * eventfd that is readable while the queue is not empty.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "provider/verbs/verbs.h"

int verbs_cq_create(struct rpcrdma_dev *dev, const struct rpcrdma_cq_attr *attr,
		    struct rpcrdma_cq **out)
{
	struct vdev *d = vdev_of(dev);
	struct epoll_event ev = {.events = EPOLLIN};
	struct vcq *c = calloc(1, sizeof(*c));
	int rc = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->base.dev = dev;
	c->base.context = (attr->comp_mask & RPCRDMA_CQ_ATTR_CONTEXT) ? attr->context : NULL;
	c->dev = d;
	/* room for a full CQ plus the flushes of held work */
	c->cap = attr->cqe * 2 + 16;
	c->ring = calloc(c->cap, sizeof(*c->ring));
	c->ch = ibv_create_comp_channel(d->ctx);
	if (!c->ring || !c->ch)
		goto fail;
	c->cq = ibv_create_cq(d->ctx,
			      d->attr.max_cqe > 0 && attr->cqe > (uint32_t)d->attr.max_cqe
				  ? d->attr.max_cqe
				  : (int)attr->cqe,
			      c, c->ch, 0);
	if (!c->cq) {
		rc = verbs_errno(ENOMEM);
		goto fail;
	}
	ev.data.fd = c->ch->fd;
	if (verbs_set_nonblock(c->ch->fd) || epoll_ctl(d->epfd, EPOLL_CTL_ADD, c->ch->fd, &ev)) {
		rc = verbs_errno(EIO);
		goto fail;
	}
	pthread_mutex_lock(&d->lock);
	c->next = d->cqs;
	d->cqs = c;
	d->ncq++;
	pthread_mutex_unlock(&d->lock);
	*out = &c->base;
	return 0;
fail:
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	free(c->ring);
	free(c);
	return rc;
}

int verbs_cq_destroy(struct rpcrdma_cq *cq)
{
	struct vcq *c = container_of(cq, struct vcq, base), **pp;
	struct vdev *d = c->dev;

	pthread_mutex_lock(&d->lock);
	if (c->nep) {
		pthread_mutex_unlock(&d->lock);
		return -EBUSY;
	}
	for (pp = &d->cqs; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	d->ncq--;
	pthread_mutex_unlock(&d->lock);
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->ch->fd, NULL);
	/* events of an arming nobody consumed must be acknowledged first */
	verbs_cq_ack_notify(cq);
	ibv_destroy_cq(c->cq);
	ibv_destroy_comp_channel(c->ch);
	free(c->ring);
	free(c);
	return 0;
}

void verbs_cq_push(struct vcq *c, const struct rpcrdma_wc *wc)
{
	if (c->count == c->cap)
		return; /* overflow: the caller posted more than its CQ holds */
	c->ring[(c->head + c->count) % c->cap] = *wc;
	c->count++;
	c->fresh++;
}

/* Poll the hardware into @wc (at most @n); returns the count kept. */
static int poll_hw(struct vcq *c, struct rpcrdma_wc *wc, int n)
{
	struct ibv_wc hw[16];
	int got = 0;

	while (got < n) {
		int want = n - got < 16 ? n - got : 16;
		int m = ibv_poll_cq(c->cq, want, hw);

		if (m <= 0)
			break;
		for (int i = 0; i < m; i++)
			if (verbs_wc_translate(c->dev, &hw[i], &wc[got]))
				got++;
		if (m < want)
			break;
	}
	return got;
}

int verbs_cq_poll(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n)
{
	struct vcq *c = container_of(cq, struct vcq, base);
	int got = 0;

	pthread_mutex_lock(&c->dev->lock);
	while (got < n && c->count) {
		wc[got++] = c->ring[c->head];
		c->head = (c->head + 1) % c->cap;
		c->count--;
	}
	if (got < n)
		got += poll_hw(c, wc + got, n - got);
	pthread_mutex_unlock(&c->dev->lock);
	return got;
}

void verbs_cq_reap(struct vcq *c)
{
	for (;;) {
		struct rpcrdma_wc wc[16];
		uint32_t room = c->cap - c->count;
		int m = poll_hw(c, wc, room < 16 ? (int)room : 16);

		for (int i = 0; i < m; i++)
			verbs_cq_push(c, &wc[i]);
		if (m < 16)
			break;
	}
}

int verbs_cq_harvest(struct vdev *d)
{
	int n = 0;

	for (struct vcq *c = d->cqs; c; c = c->next) {
		void *ctx;
		struct ibv_cq *ev_cq;

		while (ibv_get_cq_event(c->ch, &ev_cq, &ctx) == 0) {
			ibv_ack_cq_events(ev_cq, 1);
			c->armed = false;
		}
		verbs_cq_reap(c);
		/* what arrived since the last look, made-up completions too */
		n += (int)c->fresh;
		c->fresh = 0;
	}
	return n;
}

void verbs_cq_arm_all(struct vdev *d)
{
	for (struct vcq *c = d->cqs; c; c = c->next) {
		if (!c->armed && ibv_req_notify_cq(c->cq, 0) == 0)
			c->armed = true;
	}
}

int verbs_cq_req_notify(struct rpcrdma_cq *cq, bool solicited_only)
{
	struct vcq *c = container_of(cq, struct vcq, base);
	int rc;

	pthread_mutex_lock(&c->dev->lock);
	rc = ibv_req_notify_cq(c->cq, solicited_only ? 1 : 0);
	if (rc == 0)
		c->armed = true;
	pthread_mutex_unlock(&c->dev->lock);
	return rc ? -rc : 0;
}

int verbs_cq_get_fd(const struct rpcrdma_cq *cq)
{
	return container_of(cq, const struct vcq, base)->ch->fd;
}

int verbs_cq_ack_notify(struct rpcrdma_cq *cq)
{
	struct vcq *c = container_of(cq, struct vcq, base);
	struct ibv_cq *ev_cq;
	void *ctx;

	pthread_mutex_lock(&c->dev->lock);
	while (ibv_get_cq_event(c->ch, &ev_cq, &ctx) == 0) {
		ibv_ack_cq_events(ev_cq, 1);
		c->armed = false;
	}
	pthread_mutex_unlock(&c->dev->lock);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Event channels                                                      */
/* ------------------------------------------------------------------ */

int verbs_evch_create(struct rpcrdma_dev *dev, const struct rpcrdma_evch_attr *attr,
		      struct rpcrdma_evch **out)
{
	struct vdev *d = vdev_of(dev);
	struct vevch *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return -ENOMEM;
	ch->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch->efd < 0) {
		free(ch);
		return verbs_errno(EMFILE);
	}
	ch->base.dev = dev;
	ch->base.context =
	    attr && (attr->comp_mask & RPCRDMA_EVCH_ATTR_CONTEXT) ? attr->context : NULL;
	ch->dev = d;
	pthread_mutex_lock(&d->lock);
	d->nevch++;
	pthread_mutex_unlock(&d->lock);
	*out = &ch->base;
	return 0;
}

int verbs_evch_destroy(struct rpcrdma_evch *evch)
{
	struct vevch *ch = container_of(evch, struct vevch, base);
	struct vdev *d = ch->dev;

	pthread_mutex_lock(&d->lock);
	if (ch->users) {
		pthread_mutex_unlock(&d->lock);
		return -EBUSY;
	}
	d->nevch--;
	pthread_mutex_unlock(&d->lock);
	/* Queued CONNECT_REQUESTs belong to listeners, which are gone by now
	 * (users == 0): their requests were rejected with them. */
	close(ch->efd);
	free(ch->q);
	free(ch);
	return 0;
}

void verbs_evch_push(struct vevch *ch, const struct rpcrdma_event *ev)
{
	uint64_t one = 1;

	if (ch->count == ch->cap) {
		uint32_t cap = ch->cap ? ch->cap * 2 : 8;
		struct rpcrdma_event *q = calloc(cap, sizeof(*q));

		if (!q)
			return; /* out of memory: the event is lost */
		for (uint32_t i = 0; i < ch->count; i++)
			q[i] = ch->q[(ch->head + i) % ch->cap];
		free(ch->q);
		ch->q = q;
		ch->cap = cap;
		ch->head = 0;
	}
	ch->q[(ch->head + ch->count) % ch->cap] = *ev;
	if (ch->count++ == 0)
		(void)!write(ch->efd, &one, sizeof(one));
}

int verbs_evch_get(struct rpcrdma_evch *evch, struct rpcrdma_event *ev)
{
	struct vevch *ch = container_of(evch, struct vevch, base);
	uint64_t v;
	int rc = -EAGAIN;

	pthread_mutex_lock(&ch->dev->lock);
	if (ch->count) {
		*ev = ch->q[ch->head];
		ch->head = (ch->head + 1) % ch->cap;
		if (--ch->count == 0)
			(void)!read(ch->efd, &v, sizeof(v));
		rc = 0;
	}
	pthread_mutex_unlock(&ch->dev->lock);
	return rc;
}

int verbs_evch_get_fd(const struct rpcrdma_evch *ch)
{
	return container_of(ch, const struct vevch, base)->efd;
}
