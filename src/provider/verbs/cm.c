/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's connection management through rdma_cm: the active
 * side resolves the address, then the route, creates its QP and connects;
 * the passive side listens and reports each request, which the caller
 * accepts onto a fresh endpoint or rejects. The RFC 8797 private data the
 * transport passes travels in the rdma_cm private data as is (an MPA
 * request or reply on iWARP, a REQ, REP or REJ on InfiniBand and RoCE,
 * which pad it with zeros: the transport's decoder reads the fixed 8
 * bytes it needs). IRD and ORD go in conn_param (responder_resources,
 * initiator_depth), bounded by the device (max_qp_rd_atom,
 * max_qp_init_rd_atom) and by what the peer offered.
 *
 * Disconnection: DISCONNECTED is reported once the hardware has flushed
 * the endpoint's receives and signaled Sends into the CQ (the contract
 * orders it after the flushes), or after VERBS_DOWN_WAIT_MS at most.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "provider/verbs/verbs.h"

#define VERBS_DOWN_WAIT_MS         200u
#define IB_CM_REJ_CONSUMER_DEFINED 28 /* an IB REJ reason: the peer's own reject */

/* What progress keeps of an rdma_cm event after acknowledging it. */
struct cm_copy {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id, *listen_id;
	uint8_t rr, depth; /* the peer's responder_resources, initiator_depth */
	uint16_t pdata_len;
	uint8_t pdata[RPCRDMA_MAX_PRIVATE_DATA];
};

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static void copy_addr(struct sockaddr_storage *to, const struct sockaddr *sa)
{
	memset(to, 0, sizeof(*to));
	if (!sa)
		return;
	memcpy(to, sa,
	       sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in));
}

static void event_init(struct rpcrdma_event *ev, enum rpcrdma_event_type type, struct vep *e,
		       int status)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->status = status;
	ev->ep = &e->base;
	ev->context = e->base.context;
	ev->mpa_rev = e->dev->iwarp ? 2 : 0;
}

static void set_pdata(struct rpcrdma_event *ev, const struct cm_copy *c)
{
	ev->private_data_len = c->pdata_len;
	memcpy(ev->private_data, c->pdata, c->pdata_len);
}

/* Connection setup failed: flush what is held, report it. */
static int conn_fail(struct vep *e, enum rpcrdma_event_type type, int status,
		     const struct cm_copy *c)
{
	struct rpcrdma_event ev;

	e->state = VEP_DOWN;
	e->down_reported = true;
	verbs_qp_down(e);
	event_init(&ev, type, e, status);
	if (c && type == RPCRDMA_EV_REJECTED)
		set_pdata(&ev, c);
	verbs_evch_push(e->evch, &ev);
	return 1;
}

/* The connection is down: flush, and report once the flushes are in. */
static void conn_down(struct vep *e, int status)
{
	if (e->state == VEP_DOWN)
		return;
	if (e->id && !e->disconnecting) {
		/* answer the peer's disconnect (an IB DREP; iWARP closes) */
		e->disconnecting = true;
		(void)rdma_disconnect(e->id);
	}
	e->state = VEP_DOWN;
	e->down_status = status;
	e->down_deadline_ns = verbs_now_ns() + VERBS_DOWN_WAIT_MS * 1000000ull;
	verbs_qp_down(e);
}

static bool flushes_pending(const struct vep *e)
{
	if (e->rq.tail != e->rq.head)
		return true;
	for (uint32_t q = e->sq.head; q != e->sq.tail; q++) {
		const struct vslot *s = &e->sq.s[q % e->sq.size];

		if (!s->done && (s->signaled || s->quiet))
			return true;
	}
	return false;
}

int verbs_cm_down_check(struct vdev *d)
{
	int n = 0;

	for (struct vep *e = d->eps; e; e = e->next) {
		struct rpcrdma_event ev;

		if (e->state != VEP_DOWN || e->down_reported)
			continue;
		if (flushes_pending(e) && verbs_now_ns() < e->down_deadline_ns)
			continue;
		e->down_reported = true;
		event_init(&ev, RPCRDMA_EV_DISCONNECTED, e, e->down_status);
		copy_addr(&ev.peer, (struct sockaddr *)&e->peer);
		verbs_evch_push(e->evch, &ev);
		n++;
	}
	return n;
}

static int on_established(struct vep *e, const struct cm_copy *c)
{
	struct rpcrdma_event ev;

	if (!e->passive) {
		/* 0 from a peer means "not told": keep ours */
		e->eff_ord = c->rr ? min_u32(e->ord, c->rr) : e->ord;
		e->eff_ird = c->depth ? min_u32(e->ird, c->depth) : e->ird;
	}
	copy_addr(&e->local, rdma_get_local_addr(e->id));
	copy_addr(&e->peer, rdma_get_peer_addr(e->id));
	e->state = VEP_CONNECTED;
	verbs_qp_start(e);
	event_init(&ev, RPCRDMA_EV_ESTABLISHED, e, 0);
	ev.ird = c->rr;
	ev.ord = c->depth;
	ev.peer = e->peer;
	if (!e->passive)
		set_pdata(&ev, c);
	verbs_evch_push(e->evch, &ev);
	return 1;
}

static int on_route(struct vep *e)
{
	struct rdma_conn_param p = {
	    .private_data = e->pdata,
	    .private_data_len = (uint8_t)e->pdata_len,
	    .responder_resources = (uint8_t)e->ird,
	    .initiator_depth = (uint8_t)e->ord,
	    .retry_count = 7,
	    .rnr_retry_count = 7,
	};
	int rc = verbs_qp_create(e);

	if (rc)
		return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, rc, NULL);
	if (rdma_connect(e->id, &p))
		return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, verbs_errno(ECONNABORTED), NULL);
	return 0;
}

static int on_failure(struct vep *e, const struct cm_copy *c)
{
	int st = c->status < 0 ? c->status : 0;

	switch (c->type) {
	case RDMA_CM_EVENT_REJECTED:
		/* the peer's reject carries its reason; a missing listener
		 * (IB: invalid service id; iWARP: TCP refused) is no reject */
		if (c->status == IB_CM_REJ_CONSUMER_DEFINED || (e->dev->iwarp && c->pdata_len))
			return conn_fail(e, RPCRDMA_EV_REJECTED, -ECONNREFUSED, c);
		return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, -ECONNREFUSED, NULL);
	case RDMA_CM_EVENT_UNREACHABLE:
		return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, st ? st : -ETIMEDOUT, NULL);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, st ? st : -EHOSTUNREACH, NULL);
	default:
		return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, st ? st : -ECONNABORTED, NULL);
	}
}

static struct vep *ep_by_id(struct vdev *d, struct rdma_cm_id *id)
{
	struct vep *e = d->eps;

	while (e && e->id != id)
		e = e->next;
	return e;
}

static int on_request(struct vdev *d, const struct cm_copy *c)
{
	struct vlistener *l = d->listeners;
	struct rpcrdma_event ev;
	struct vreq *r;

	while (l && l->id != c->listen_id)
		l = l->next;
	r = l && c->id->verbs == d->ctx ? calloc(1, sizeof(*r)) : NULL;
	if (!r) {
		/* no listener any more, another device's port, or no memory */
		(void)rdma_reject(c->id, NULL, 0);
		rdma_destroy_id(c->id);
		return 0;
	}
	r->base.dev = &d->base;
	r->l = l;
	r->id = c->id;
	r->peer_rr = c->rr;
	r->peer_depth = c->depth;
	r->next = l->reqs;
	l->reqs = r;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_EV_CONNECT_REQUEST;
	ev.listener = &l->base;
	ev.req = &r->base;
	ev.context = l->base.context;
	ev.ird = c->rr;
	ev.ord = c->depth;
	ev.mpa_rev = d->iwarp ? 2 : 0;
	copy_addr(&ev.peer, rdma_get_peer_addr(c->id));
	set_pdata(&ev, c);
	verbs_evch_push(l->evch, &ev);
	return 1;
}

static int cm_handle(struct vdev *d, const struct cm_copy *c)
{
	struct vep *e;

	if (!c->id)
		return 0; /* every event we ask for names its id */
	if (c->type == RDMA_CM_EVENT_CONNECT_REQUEST)
		return on_request(d, c);
	e = ep_by_id(d, c->id);
	if (!e || e->state == VEP_IDLE)
		return 0; /* an unanswered request's id, or a late event */
	switch (c->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (e->state != VEP_CONNECTING)
			return 0;
		if (c->id->verbs != d->ctx) /* the address is another device's */
			return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, -ENODEV, NULL);
		if (rdma_resolve_route(e->id, (int)e->timeout_ms))
			return conn_fail(e, RPCRDMA_EV_CONNECT_ERROR, verbs_errno(EHOSTUNREACH),
					 NULL);
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return e->state == VEP_CONNECTING ? on_route(e) : 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		return e->state == VEP_CONNECTING ? on_established(e, c) : 0;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (e->state == VEP_CONNECTING)
			return on_failure(e, c);
		if (e->state == VEP_CONNECTED)
			conn_down(e, c->status < 0 ? c->status : -ECONNRESET);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		conn_down(e, 0);
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		conn_down(e, -ENODEV);
		return 0;
	default:
		return 0; /* TIMEWAIT_EXIT, ADDR_CHANGE, ... */
	}
}

int verbs_cm_drain(struct vdev *d)
{
	struct rdma_cm_event *ev;
	struct cm_copy c;
	int n = 0;

	while (rdma_get_cm_event(d->cm_ch, &ev) == 0) {
		memset(&c, 0, sizeof(c));
		c.type = ev->event;
		c.status = ev->status;
		c.id = ev->id;
		c.listen_id = ev->listen_id;
		if (ev->id && ev->id->ps == RDMA_PS_TCP) {
			c.rr = ev->param.conn.responder_resources;
			c.depth = ev->param.conn.initiator_depth;
			if (ev->param.conn.private_data) {
				c.pdata_len = ev->param.conn.private_data_len;
				memcpy(c.pdata, ev->param.conn.private_data, c.pdata_len);
			}
		}
		/* acknowledged before the lock: rdma_destroy_id (under it)
		 * waits for this */
		rdma_ack_cm_event(ev);
		pthread_mutex_lock(&d->lock);
		n += cm_handle(d, &c);
		pthread_mutex_unlock(&d->lock);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */

int verbs_connect(struct rpcrdma_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		  const void *pdata, size_t len)
{
	struct vep *e = container_of(ep, struct vep, base);
	struct vdev *d = e->dev;
	int rc = 0;

	(void)addrlen;
	if (len > 255) /* rdma_conn_param's length is 8 bits */
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (e->id || e->state != VEP_IDLE) {
		rc = -EISCONN;
		goto out;
	}
	if (len) /* pdata may be NULL then */
		memcpy(e->pdata, pdata, len);
	e->pdata_len = (uint16_t)len;
	if (rdma_create_id(d->cm_ch, &e->id, e, RDMA_PS_TCP)) {
		rc = verbs_errno(ENOMEM);
		e->id = NULL;
		goto out;
	}
	if (rdma_resolve_addr(e->id, NULL, (struct sockaddr *)(uintptr_t)addr,
			      (int)e->timeout_ms)) {
		rc = verbs_errno(EHOSTUNREACH);
		rdma_destroy_id(e->id);
		e->id = NULL;
		goto out;
	}
	e->state = VEP_CONNECTING;
out:
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* The address to listen on. Linux siw takes an IPv4 connection on an IPv6
 * wildcard listener's socket, but rdma_cm then refuses it (seen in the
 * guest: ECONNREFUSED for every client of a "::" listener, none with
 * 0.0.0.0): so on iWARP the IPv6 wildcard becomes the IPv4 one, same port.
 * InfiniBand and RoCE match IPv4 requests to "::" themselves. */
static const struct sockaddr *listen_addr(const struct vdev *d, const struct sockaddr *addr,
					  struct sockaddr_in *any4)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)addr;

	if (!d->iwarp || addr->sa_family != AF_INET6 || !IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr))
		return addr;
	memset(any4, 0, sizeof(*any4));
	any4->sin_family = AF_INET;
	any4->sin_port = s6->sin6_port;
	any4->sin_addr.s_addr = htonl(INADDR_ANY);
	return (const struct sockaddr *)any4;
}

int verbs_listen(struct rpcrdma_dev *dev, struct rpcrdma_evch *evch, const struct sockaddr *addr,
		 socklen_t addrlen, int backlog, void *context, struct rpcrdma_listener **out)
{
	struct vdev *d = vdev_of(dev);
	struct vlistener *l = calloc(1, sizeof(*l));
	struct sockaddr_in any4;
	int rc;

	(void)addrlen;
	if (!l)
		return -ENOMEM;
	l->base.dev = dev;
	l->base.context = context;
	l->dev = d;
	l->evch = container_of(evch, struct vevch, base);
	pthread_mutex_lock(&d->lock);
	if (rdma_create_id(d->cm_ch, &l->id, l, RDMA_PS_TCP)) {
		rc = verbs_errno(ENOMEM);
		goto fail;
	}
	addr = listen_addr(d, addr, &any4);
	if (rdma_bind_addr(l->id, (struct sockaddr *)(uintptr_t)addr) ||
	    rdma_listen(l->id, backlog > 0 ? backlog : 64)) {
		rc = verbs_errno(EADDRNOTAVAIL);
		rdma_destroy_id(l->id);
		goto fail;
	}
	l->evch->users++;
	d->nlistener++;
	l->next = d->listeners;
	d->listeners = l;
	pthread_mutex_unlock(&d->lock);
	*out = &l->base;
	return 0;
fail:
	pthread_mutex_unlock(&d->lock);
	free(l);
	return rc;
}

/* Locked: take @r off its listener's list. */
static void req_unlink(struct vreq *r)
{
	struct vreq **pp = &r->l->reqs;

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
}

int verbs_listener_destroy(struct rpcrdma_listener *lst)
{
	struct vlistener *l = container_of(lst, struct vlistener, base), **pp;
	struct vdev *d = l->dev;

	pthread_mutex_lock(&d->lock);
	while (l->reqs) {
		struct vreq *r = l->reqs;

		l->reqs = r->next;
		(void)rdma_reject(r->id, NULL, 0);
		rdma_destroy_id(r->id);
		free(r);
	}
	for (pp = &d->listeners; *pp != l; pp = &(*pp)->next)
		;
	*pp = l->next;
	rdma_destroy_id(l->id);
	l->evch->users--;
	d->nlistener--;
	pthread_mutex_unlock(&d->lock);
	free(l);
	return 0;
}

int verbs_listener_addr(const struct rpcrdma_listener *lst, struct sockaddr_storage *addr)
{
	const struct vlistener *l = container_of(lst, const struct vlistener, base);

	copy_addr(addr, rdma_get_local_addr(l->id));
	return 0;
}

int verbs_accept(struct rpcrdma_conn_req *req, struct rpcrdma_ep *ep, const void *pdata, size_t len)
{
	struct vreq *r = container_of(req, struct vreq, base);
	struct vep *e = container_of(ep, struct vep, base);
	struct vdev *d = e->dev;
	struct rdma_conn_param p = {
	    .private_data = pdata, .private_data_len = (uint8_t)len, .rnr_retry_count = 7};
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	req_unlink(r);
	if (e->id || e->state != VEP_IDLE || len > 255) {
		rc = e->id ? -EISCONN : -EINVAL;
		goto reject;
	}
	e->id = r->id;
	e->id->context = e;
	e->passive = true;
	e->state = VEP_CONNECTING;
	/* our IRD serves the peer's ORD, our ORD is bounded by its IRD */
	e->eff_ird = r->peer_depth ? min_u32(e->ird, r->peer_depth) : e->ird;
	e->eff_ord = r->peer_rr ? min_u32(e->ord, r->peer_rr) : e->ord;
	p.responder_resources = (uint8_t)e->eff_ird;
	p.initiator_depth = (uint8_t)e->eff_ord;
	rc = verbs_qp_create(e);
	if (!rc && rdma_accept(e->id, &p))
		rc = verbs_errno(ECONNABORTED);
	if (rc) {
		if (e->qp) {
			/* the QP number leaves the map with the QP */
			struct vep **pp = &d->qpns[e->qpn % VERBS_HASH];

			while (*pp && *pp != e)
				pp = &(*pp)->qnext;
			if (*pp)
				*pp = e->qnext;
			rdma_destroy_qp(e->id);
			e->qp = NULL;
		}
		e->id = NULL;
		e->passive = false;
		e->state = VEP_IDLE;
		goto reject;
	}
	pthread_mutex_unlock(&d->lock);
	free(r);
	return 0;
reject:
	(void)rdma_reject(r->id, NULL, 0);
	rdma_destroy_id(r->id);
	pthread_mutex_unlock(&d->lock);
	free(r);
	return rc;
}

int verbs_reject(struct rpcrdma_conn_req *req, const void *pdata, size_t len)
{
	struct vreq *r = container_of(req, struct vreq, base);
	struct vdev *d = vdev_of(req->dev);
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	req_unlink(r);
	if (rdma_reject(r->id, pdata, (uint8_t)(len > 255 ? 0 : len)))
		rc = verbs_errno(ECONNABORTED);
	rdma_destroy_id(r->id);
	pthread_mutex_unlock(&d->lock);
	free(r);
	return rc;
}

int verbs_disconnect(struct rpcrdma_ep *ep)
{
	struct vep *e = container_of(ep, struct vep, base);

	pthread_mutex_lock(&e->dev->lock);
	if (e->id && (e->state == VEP_CONNECTED || e->state == VEP_CONNECTING)) {
		bool up = e->state == VEP_CONNECTED;

		e->disconnecting = true;
		/* connected: DISCONNECTED comes from rdma_cm; before that,
		 * there is nothing to wait for */
		if (rdma_disconnect(e->id) || !up)
			conn_down(e, 0);
	}
	pthread_mutex_unlock(&e->dev->lock);
	return 0;
}
