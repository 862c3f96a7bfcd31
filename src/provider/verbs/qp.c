/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's endpoints: an rdma_cm id with an RC queue pair, and
 * the posting of work.
 *
 * The QP is created on the cm_id once rdma_cm knows the route (active
 * side) or at accept (passive side): only then is the port known. The
 * contract lets a caller post receives before connecting, and Sends before
 * the connection is up, so until then a request waits in its slot with a
 * copy of its SGEs (the slots are preallocated to the queue depths) and is
 * handed to the QP in posting order when it can be (verbs_qp_create posts
 * the receives, verbs_qp_start the rest).
 *
 * Hardware work request ids are slot sequence numbers (bit 63 set for
 * receives); the caller's wr_id and the opcode stay in the slot, because a
 * verbs completion in error has no opcode and an unsignaled Send never
 * completes on its own: a completion retires its slot and every earlier
 * unsignaled one (ring_retire: a signaled one waits for its own, which
 * Linux siw may deliver after later ones). A caller may leave every Send
 * unsignaled (our client does: a reply proves delivery), but a verbs send
 * queue frees its slots only through a signaled completion: so every
 * quarter of a queue (made twice as deep as asked, so that completions on
 * their way leave room) we signal one ourselves and keep its success
 * quiet. Completions find their endpoint by QP number, so those of a
 * destroyed endpoint are dropped instead of naming freed memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider/verbs/verbs.h"

#define RECV_BIT (1ull << 63)

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t clamp_dev(int devmax, uint32_t v)
{
	return devmax > 0 ? min_u32(v, (uint32_t)devmax) : v;
}

static int ring_init(struct vring *r, uint32_t size, uint32_t max_sge)
{
	r->size = size ? size : 1;
	r->max_sge = max_sge ? max_sge : 1;
	r->s = calloc(r->size, sizeof(*r->s));
	r->sges = calloc((size_t)r->size * r->max_sge, sizeof(*r->sges));
	if (!r->s || !r->sges)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->size; i++)
		r->s[i].sgl = &r->sges[(size_t)i * r->max_sge];
	return 0;
}

static void ring_fini(struct vring *r)
{
	free(r->s);
	free(r->sges);
}

static unsigned int qbucket(uint32_t qpn)
{
	return qpn % VERBS_HASH;
}

struct vep *verbs_ep_by_qpn(struct vdev *d, uint32_t qpn)
{
	struct vep *e = d->qpns[qbucket(qpn)];

	while (e && e->qpn != qpn)
		e = e->qnext;
	return e;
}

static void qpn_del(struct vdev *d, struct vep *e)
{
	struct vep **pp = &d->qpns[qbucket(e->qpn)];

	while (*pp && *pp != e)
		pp = &(*pp)->qnext;
	if (*pp)
		*pp = e->qnext;
}

uint32_t verbs_ep_outstanding(const struct vep *e)
{
	return (e->sq.tail - e->sq.head) + (e->rq.tail - e->rq.head);
}

int verbs_ep_create(struct rpcrdma_pd *pd, const struct rpcrdma_ep_attr *attr,
		    struct rpcrdma_ep **out)
{
	struct vpd *p = container_of(pd, struct vpd, base);
	struct vdev *d = vdev_of(pd->dev);
	uint32_t m = attr->comp_mask, swr = 128, rwr = 128;
	struct vep *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->base.dev = pd->dev;
	e->base.pd = pd;
	e->base.context = (m & RPCRDMA_EP_ATTR_CONTEXT) ? attr->context : NULL;
	e->dev = d;
	e->pd = p;
	e->scq = container_of(attr->send_cq, struct vcq, base);
	e->rcq = container_of(attr->recv_cq, struct vcq, base);
	e->evch = container_of(attr->evch, struct vevch, base);
	if (m & RPCRDMA_EP_ATTR_SRQ)
		e->srq = container_of(attr->srq, struct vsrq, base);
	e->max_send_sge = 4;
	e->max_recv_sge = 4;
	if (m & RPCRDMA_EP_ATTR_CAPS) {
		swr = attr->max_send_wr;
		rwr = attr->max_recv_wr;
		e->max_send_sge = attr->max_send_sge;
		e->max_recv_sge = attr->max_recv_sge;
	}
	/* Twice the depth asked for: unsignaled Sends hold their slots
	 * (here and in the hardware) until a later signaled one completes,
	 * so a caller with every asked-for Send in flight would otherwise
	 * find the queue full while their completions are on the way (seen
	 * on rxe: 300 asynchronous calls with 64 credits, -ENOMEM) */
	swr = clamp_dev(d->attr.max_qp_wr, swr > UINT32_MAX / 2 ? swr : 2 * swr);
	rwr = e->srq ? 1 : clamp_dev(d->attr.max_qp_wr, rwr);
	e->max_send_sge = clamp_dev(d->attr.max_sge, e->max_send_sge);
	e->max_recv_sge = clamp_dev(d->attr.max_sge, e->max_recv_sge);
	e->max_send_sge = min_u32(e->max_send_sge, VERBS_MAX_SGE);
	e->max_recv_sge = min_u32(e->max_recv_sge, VERBS_MAX_SGE);
	e->ird = e->ord = 16;
	if (m & RPCRDMA_EP_ATTR_IRD_ORD) {
		e->ird = attr->ird;
		e->ord = attr->ord;
	}
	/* rdma_cm carries IRD and ORD in 8 bits; the device bounds them */
	e->ird = min_u32(clamp_dev(d->attr.max_qp_rd_atom, e->ird), 255);
	e->ord = min_u32(clamp_dev(d->attr.max_qp_init_rd_atom, e->ord), 255);
	e->timeout_ms = (m & RPCRDMA_EP_ATTR_TIMEOUT) && attr->connect_timeout_ms
			    ? attr->connect_timeout_ms
			    : 10000;
	if (ring_init(&e->sq, swr, e->max_send_sge) || ring_init(&e->rq, rwr, e->max_recv_sge)) {
		ring_fini(&e->sq);
		ring_fini(&e->rq);
		free(e);
		return -ENOMEM;
	}
	pthread_mutex_lock(&d->lock);
	e->scq->nep++;
	e->rcq->nep++;
	e->evch->users++;
	if (e->srq)
		e->srq->nep++;
	p->nep++;
	d->nep++;
	e->next = d->eps;
	d->eps = e;
	pthread_mutex_unlock(&d->lock);
	*out = &e->base;
	return 0;
}

/* Complete slot @s of @e as flushed, through @cq's ring. */
static void flush_one(struct vep *e, struct vcq *cq, const struct vslot *s)
{
	struct rpcrdma_wc wc = {.wr_id = s->wr_id,
				.status = RPCRDMA_WC_WR_FLUSH_ERR,
				.opcode = s->opcode,
				.ep = &e->base};

	verbs_cq_push(cq, &wc);
}

/* Complete every slot from @from to the ring's tail as flushed (but those
 * that completed already). */
static void flush_from(struct vep *e, struct vring *r, struct vcq *cq, uint32_t from)
{
	for (uint32_t q = from; q != r->tail; q++) {
		struct vslot *s = &r->s[q % r->size];

		if (!s->done && !s->bind)
			flush_one(e, cq, s);
		s->done = false;
		s->bind = false;
	}
	r->tail = from;
	if ((int32_t)(r->posted - from) > 0)
		r->posted = from;
}

void verbs_qp_down(struct vep *e)
{
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_ERR};

	flush_from(e, &e->sq, e->scq, e->sq.posted);
	flush_from(e, &e->rq, e->rcq, e->rq.posted);
	if (e->qp)
		(void)ibv_modify_qp(e->qp, &qa, IBV_QP_STATE);
}

/* Purge @e's events still queued on its channel (the handle dies). */
static void purge_events(struct vep *e)
{
	struct vevch *ch = e->evch;
	uint32_t kept = 0;

	for (uint32_t i = 0; i < ch->count; i++) {
		struct rpcrdma_event *ev = &ch->q[(ch->head + i) % ch->cap];

		if (ev->ep != &e->base)
			ch->q[(ch->head + kept++) % ch->cap] = *ev;
	}
	if (kept == 0 && ch->count) {
		uint64_t v;

		(void)!read(ch->efd, &v, sizeof(v));
	}
	ch->count = kept;
}

int verbs_ep_destroy(struct rpcrdma_ep *ep)
{
	struct vep *e = container_of(ep, struct vep, base), **pp;
	struct vdev *d = e->dev;

	pthread_mutex_lock(&d->lock);
	/* abortive: everything outstanding completes flushed, the hardware's
	 * own completions of this QP are dropped from now on */
	flush_from(e, &e->sq, e->scq, e->sq.head);
	flush_from(e, &e->rq, e->rcq, e->rq.head);
	/* windows bound to the QP go first: rxe holds the QP while one is */
	if (d->nscoped)
		verbs_mr_unbind_ep(d, e);
	if (e->qp)
		qpn_del(d, e);
	for (pp = &d->eps; *pp != e; pp = &(*pp)->next)
		;
	*pp = e->next;
	purge_events(e);
	if (e->id) {
		if (e->qp)
			rdma_destroy_qp(e->id);
		rdma_destroy_id(e->id);
	}
	e->scq->nep--;
	e->rcq->nep--;
	e->evch->users--;
	if (e->srq)
		e->srq->nep--;
	e->pd->nep--;
	d->nep--;
	pthread_mutex_unlock(&d->lock);
	ring_fini(&e->sq);
	ring_fini(&e->rq);
	free(e);
	return 0;
}

int verbs_ep_query_stats(struct rpcrdma_ep *ep, struct rpcrdma_ep_stats *st)
{
	struct vep *e = container_of(ep, struct vep, base);

	pthread_mutex_lock(&e->dev->lock);
	*st = e->st;
	pthread_mutex_unlock(&e->dev->lock);
	return 0;
}

int verbs_ep_query_conn(struct rpcrdma_ep *ep, struct rpcrdma_ep_conn_info *ci)
{
	struct vep *e = container_of(ep, struct vep, base);
	int rc = 0;

	pthread_mutex_lock(&e->dev->lock);
	if (e->state != VEP_CONNECTED) {
		rc = -ENOTCONN;
	} else {
		ci->mpa_rev = e->dev->iwarp ? 2 : 0;
		ci->ird = e->eff_ird;
		ci->ord = e->eff_ord;
		ci->local = e->local;
		ci->peer = e->peer;
	}
	pthread_mutex_unlock(&e->dev->lock);
	return rc;
}

/* SGEs for the hardware: the STag is the rkey; the device may want the
 * lkey (an STag we never registered is passed as it is). */
void verbs_to_ibv_sges(struct vdev *d, const struct rpcrdma_sge *sg, uint32_t n,
		       struct ibv_sge *out, uint32_t *total)
{
	*total = 0;
	for (uint32_t i = 0; i < n; i++) {
		out[i].addr = sg[i].addr;
		out[i].length = sg[i].length;
		out[i].lkey = sg[i].lkey;
		*total += sg[i].length;
		if (d->keys_differ) {
			struct vmr *m = verbs_mr_find(d, sg[i].lkey);

			if (m)
				out[i].lkey = m->lkey;
		}
	}
}

static int hw_post_recv(struct vep *e, uint32_t seq, const struct rpcrdma_sge *sg, uint32_t n)
{
	struct ibv_sge sge[VERBS_MAX_SGE];
	struct ibv_recv_wr wr = {.wr_id = seq | RECV_BIT, .sg_list = sge, .num_sge = (int)n}, *bad;
	uint32_t total;

	verbs_to_ibv_sges(e->dev, sg, n, sge, &total);
	return ibv_post_recv(e->qp, &wr, &bad);
}

static int hw_post_send(struct vep *e, uint32_t seq, const struct rpcrdma_send_wr *w)
{
	struct ibv_sge sge[VERBS_MAX_SGE];
	struct ibv_send_wr wr = {.wr_id = seq, .sg_list = sge, .num_sge = (int)w->num_sge}, *bad;
	uint32_t total;

	verbs_to_ibv_sges(e->dev, w->sg, w->num_sge, sge, &total);
	switch (w->opcode) {
	case RPCRDMA_WR_SEND:
		/* Send With Invalidate only when asked: the transport asks
		 * only a peer whose private data offered it, and ours never
		 * does over verbs (no RPCRDMA_DEV_CAP_REMOTE_INV, device.c) */
		if (w->flags & RPCRDMA_SEND_INVALIDATE) {
			wr.opcode = IBV_WR_SEND_WITH_INV;
			wr.invalidate_rkey = w->invalidate_stag;
		} else {
			wr.opcode = IBV_WR_SEND;
		}
		break;
	case RPCRDMA_WR_RDMA_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	default:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	}
	if (w->opcode != RPCRDMA_WR_SEND) {
		wr.wr.rdma.remote_addr = w->remote_offset;
		wr.wr.rdma.rkey = w->remote_stag;
	}
	if ((w->flags & RPCRDMA_SEND_SIGNALED) || e->sq.s[seq % e->sq.size].quiet)
		wr.send_flags |= IBV_SEND_SIGNALED;
	if (w->flags & RPCRDMA_SEND_SOLICITED)
		wr.send_flags |= IBV_SEND_SOLICITED;
	if (w->flags & RPCRDMA_SEND_FENCE)
		wr.send_flags |= IBV_SEND_FENCE;
	/* small Sends and Writes go inline: the device copies them at once */
	if (w->opcode != RPCRDMA_WR_RDMA_READ && w->num_sge && total <= e->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	return ibv_post_send(e->qp, &wr, &bad);
}

int verbs_qp_create(struct vep *e)
{
	static const uint32_t inline_try[] = {256, 64, 0};
	struct ibv_qp_init_attr qa;
	int rc = -EINVAL;

	for (unsigned int i = 0; i < sizeof(inline_try) / sizeof(inline_try[0]); i++) {
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = e->scq->cq;
		qa.recv_cq = e->rcq->cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = e->sq.size;
		qa.cap.max_send_sge = e->max_send_sge;
		if (e->srq) {
			qa.srq = e->srq->srq; /* no receive queue of its own */
		} else {
			qa.cap.max_recv_wr = e->rq.size;
			qa.cap.max_recv_sge = e->max_recv_sge;
		}
		qa.cap.max_inline_data = inline_try[i];
		rc = rdma_create_qp(e->id, e->pd->pd, &qa);
		if (rc == 0)
			break;
		rc = verbs_errno(EINVAL);
	}
	if (rc)
		return rc;
	e->qp = e->id->qp;
	e->qpn = e->qp->qp_num;
	e->max_inline = qa.cap.max_inline_data;
	e->qnext = e->dev->qpns[qbucket(e->qpn)];
	e->dev->qpns[qbucket(e->qpn)] = e;
	for (; e->rq.posted != e->rq.tail; e->rq.posted++) {
		struct vslot *s = &e->rq.s[e->rq.posted % e->rq.size];

		s->pending = false;
		rc = hw_post_recv(e, e->rq.posted, s->sgl, s->nsge);
		if (rc)
			return -rc;
	}
	return 0;
}

void verbs_qp_start(struct vep *e)
{
	for (; e->sq.posted != e->sq.tail; e->sq.posted++) {
		struct vslot *s = &e->sq.s[e->sq.posted % e->sq.size];

		s->pending = false;
		s->wr.sg = s->sgl;
		if (hw_post_send(e, e->sq.posted, &s->wr)) {
			/* the QP refused: it is going down; the rest flush */
			verbs_qp_down(e);
			return;
		}
	}
}

int verbs_post_recv(struct rpcrdma_ep *ep, uint64_t wr_id, const struct rpcrdma_sge *sg,
		    unsigned int num_sge)
{
	struct vep *e = container_of(ep, struct vep, base);
	struct vslot *s;
	uint32_t seq;
	int rc = 0;

	if (num_sge > e->max_recv_sge || e->srq)
		return -EINVAL;
	pthread_mutex_lock(&e->dev->lock);
	if (e->state == VEP_DOWN) {
		struct vslot f = {.wr_id = wr_id, .opcode = RPCRDMA_WC_RECV};

		flush_one(e, e->rcq, &f);
		goto out;
	}
	if (e->rq.tail - e->rq.head == e->rq.size) {
		rc = -ENOMEM;
		goto out;
	}
	seq = e->rq.tail++;
	s = &e->rq.s[seq % e->rq.size];
	s->wr_id = wr_id;
	s->opcode = RPCRDMA_WC_RECV;
	s->done = false;
	s->nsge = num_sge;
	if (!e->qp) {
		s->pending = true;
		memcpy(s->sgl, sg, num_sge * sizeof(*sg));
		goto out;
	}
	e->rq.posted = e->rq.tail;
	rc = hw_post_recv(e, seq, sg, num_sge);
	if (rc) {
		e->rq.tail--;
		e->rq.posted--;
		rc = rc == ENOMEM ? -ENOMEM : -rc;
	}
out:
	pthread_mutex_unlock(&e->dev->lock);
	return rc;
}

static int check_send(const struct vep *e, const struct rpcrdma_send_wr *wr)
{
	uint64_t total = 0;

	if (wr->opcode > RPCRDMA_WR_RDMA_READ ||
	    (wr->flags &
	     ~(uint32_t)(RPCRDMA_SEND_SIGNALED | RPCRDMA_SEND_SOLICITED | RPCRDMA_SEND_INVALIDATE |
			 RPCRDMA_SEND_FENCE | RPCRDMA_SEND_DEFER)))
		return -EINVAL;
	if (wr->num_sge > e->max_send_sge ||
	    (wr->opcode == RPCRDMA_WR_RDMA_READ && wr->num_sge > 1))
		return -EINVAL;
	if ((wr->flags & RPCRDMA_SEND_INVALIDATE) && wr->opcode != RPCRDMA_WR_SEND)
		return -EINVAL;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		total += wr->sg[i].length;
	if (e->dev->port.max_msg_sz && total > e->dev->port.max_msg_sz)
		return -EINVAL;
	return 0;
}

static void count_send(struct vep *e, const struct rpcrdma_send_wr *wr, uint32_t len)
{
	switch (wr->opcode) {
	case RPCRDMA_WR_SEND:
		e->st.sends++;
		e->st.tx_bytes += len;
		break;
	case RPCRDMA_WR_RDMA_WRITE:
		e->st.writes_out++;
		e->st.tx_bytes += len;
		break;
	default:
		e->st.reads_out++;
		break;
	}
}

static const enum rpcrdma_wc_opcode wc_op_of[] = {
    [RPCRDMA_WR_SEND] = RPCRDMA_WC_SEND,
    [RPCRDMA_WR_RDMA_WRITE] = RPCRDMA_WC_RDMA_WRITE,
    [RPCRDMA_WR_RDMA_READ] = RPCRDMA_WC_RDMA_READ,
};

int verbs_post_send(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr)
{
	struct vep *e = container_of(ep, struct vep, base);
	uint32_t seq, len = 0;
	struct vslot *s;
	int rc = check_send(e, wr);

	if (rc)
		return rc;
	for (uint32_t i = 0; i < wr->num_sge; i++)
		len += wr->sg[i].length;
	pthread_mutex_lock(&e->dev->lock);
	if (e->state == VEP_IDLE) {
		rc = -ENOTCONN;
		goto out;
	}
	if (e->state == VEP_DOWN) {
		struct vslot f = {.wr_id = wr->wr_id, .opcode = wc_op_of[wr->opcode]};

		flush_one(e, e->scq, &f);
		goto out;
	}
	if (e->sq.tail - e->sq.head == e->sq.size)
		verbs_cq_reap(e->scq); /* completions not taken yet free slots */
	if (e->sq.tail - e->sq.head == e->sq.size) {
		rc = -ENOMEM;
		goto out;
	}
	seq = e->sq.tail++;
	s = &e->sq.s[seq % e->sq.size];
	s->wr_id = wr->wr_id;
	s->opcode = wc_op_of[wr->opcode];
	s->length = len;
	s->done = false;
	s->bind = false;
	s->signaled = (wr->flags & RPCRDMA_SEND_SIGNALED) != 0;
	s->quiet = !s->signaled && seq - e->sq.last_sig >= e->sq.size / 4;
	if (s->signaled || s->quiet)
		e->sq.last_sig = seq;
	count_send(e, wr, len);
	if (e->state != VEP_CONNECTED) {
		s->pending = true;
		s->wr = *wr;
		s->nsge = wr->num_sge;
		memcpy(s->sgl, wr->sg, wr->num_sge * sizeof(*wr->sg));
		goto out;
	}
	e->sq.posted = e->sq.tail;
	rc = hw_post_send(e, seq, wr);
	if (rc) {
		e->sq.tail--;
		e->sq.posted--;
		if (rc == ENOMEM) {
			rc = -ENOMEM;
		} else {
			/* a QP in error: the request completes flushed */
			struct vslot f = {.wr_id = wr->wr_id, .opcode = wc_op_of[wr->opcode]};

			flush_one(e, e->scq, &f);
			rc = 0;
		}
	}
out:
	pthread_mutex_unlock(&e->dev->lock);
	return rc;
}

int verbs_post_bind(struct vep *e, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr,
		    uint64_t len, bool write, uint32_t rkey, uint32_t *seqp)
{
	struct ibv_send_wr wr, *bad;
	struct vslot *s;
	uint32_t seq;
	int rc;

	if (!verbs_ep_can_bind(e))
		return -ENOTCONN;
	if (e->sq.tail - e->sq.head == e->sq.size)
		verbs_cq_reap(e->scq);
	if (e->sq.tail - e->sq.head == e->sq.size)
		return -ENOMEM;
	seq = e->sq.tail++;
	s = &e->sq.s[seq % e->sq.size];
	memset(s, 0, offsetof(struct vslot, wr));
	/* signaled, so that its slot retires on its own completion; a
	 * failed bind reports nothing either: the QP is in error then, and
	 * the caller's own work flushes */
	s->quiet = true;
	s->bind = true;
	e->sq.last_sig = seq;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = seq;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags =
	    IBV_ACCESS_REMOTE_READ | (write ? IBV_ACCESS_REMOTE_WRITE : 0);
	e->sq.posted = e->sq.tail;
	rc = ibv_post_send(e->qp, &wr, &bad);
	if (rc) {
		e->sq.tail--;
		e->sq.posted--;
		s->bind = false;
		return rc == ENOMEM ? -ENOMEM : -rc;
	}
	*seqp = seq;
	return 0;
}

void verbs_bind_wait(struct vep *e, uint32_t seq)
{
	uint64_t end = verbs_now_ns() + 100000000ull;

	while (e->state == VEP_CONNECTED && seq - e->sq.head < e->sq.tail - e->sq.head &&
	       !e->sq.s[seq % e->sq.size].done && verbs_now_ns() < end)
		verbs_cq_reap(e->scq);
}

enum rpcrdma_wc_status verbs_map_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return RPCRDMA_WC_SUCCESS;
	case IBV_WC_LOC_LEN_ERR:
		return RPCRDMA_WC_LOC_LEN_ERR;
	case IBV_WC_LOC_PROT_ERR:
		return RPCRDMA_WC_LOC_PROT_ERR;
	case IBV_WC_LOC_QP_OP_ERR:
		return RPCRDMA_WC_LOC_QP_OP_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return RPCRDMA_WC_WR_FLUSH_ERR;
	case IBV_WC_REM_ACCESS_ERR:
		return RPCRDMA_WC_REM_ACCESS_ERR;
	case IBV_WC_REM_INV_REQ_ERR:
		return RPCRDMA_WC_REM_INV_REQ_ERR;
	case IBV_WC_REM_OP_ERR:
		return RPCRDMA_WC_REM_OP_ERR;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return RPCRDMA_WC_TRANSPORT_ERR;
	default:
		return RPCRDMA_WC_GENERAL_ERR;
	}
}

/* Slot @seq of @r completed: retire it, and from the oldest on every slot
 * done or unsignaled and older than the latest completion, up to the first
 * signaled one still waiting for its own (a device may complete out of
 * posting order: Linux siw a Send posted after an RDMA Read first, and a
 * Read retired with the Send would lose its completion). */
static void ring_retire(struct vring *r, uint32_t seq)
{
	r->s[seq % r->size].done = true;
	if ((int32_t)(seq + 1 - r->done_hi) > 0)
		r->done_hi = seq + 1;
	while (r->head != r->tail) {
		struct vslot *h = &r->s[r->head % r->size];

		if (!h->done && (h->signaled || h->quiet || (int32_t)(r->done_hi - r->head) <= 0))
			break;
		h->done = false;
		r->head++;
	}
}

/* A receive completed: count it, and say what came with it. */
static void recv_done(struct vdev *d, struct vep *e, const struct ibv_wc *in,
		      struct rpcrdma_wc *out)
{
	e->st.recvs++;
	e->st.rx_bytes += in->byte_len;
	if (in->wc_flags & IBV_WC_WITH_INV) {
		struct vmr *m = verbs_mr_find(d, in->invalidated_rkey);

		out->wc_flags |= RPCRDMA_WC_F_WITH_INV;
		out->invalidated_stag = in->invalidated_rkey;
		if (m)
			__atomic_store_n(&m->valid, false, __ATOMIC_RELAXED);
	} else if (in->wc_flags & IBV_WC_WITH_IMM) {
		out->wc_flags |= RPCRDMA_WC_F_WITH_IMM;
		out->imm_data = ntohl(in->imm_data);
	}
}

bool verbs_wc_translate(struct vdev *d, const struct ibv_wc *in, struct rpcrdma_wc *out)
{
	struct vep *e = verbs_ep_by_qpn(d, in->qp_num);
	bool recv = (in->wr_id & RECV_BIT) != 0;
	uint32_t seq = (uint32_t)in->wr_id;
	struct vring *r;
	struct vslot *s;

	if (in->wr_id & SRQ_BIT) {
		/* a shared receive: found by its queue's slot, the endpoint by
		 * the QP number (none: back into the queue) */
		if (!verbs_srq_translate(d, e, in, out))
			return false;
		if (in->status == IBV_WC_SUCCESS)
			recv_done(d, e, in, out);
		return true;
	}
	if (!e)
		return false;
	r = recv ? &e->rq : &e->sq;
	if (seq - r->head >= r->tail - r->head)
		return false; /* not outstanding (flushed by us already) */
	s = &r->s[seq % r->size];
	if (s->done)
		return false;
	if (!recv && (s->bind || (s->quiet && in->status == IBV_WC_SUCCESS))) {
		ring_retire(r, seq); /* our own signal: retires, says nothing */
		return false;
	}
	memset(out, 0, sizeof(*out));
	out->wr_id = s->wr_id;
	out->opcode = s->opcode;
	out->status = verbs_map_status(in->status);
	out->vendor_err = in->status == IBV_WC_SUCCESS ? 0 : in->vendor_err;
	out->ep = &e->base;
	/* verbs defines byte_len for receives only; else what was asked */
	out->byte_len = recv ? in->byte_len : s->length;
	if (in->status == IBV_WC_SUCCESS && recv)
		recv_done(d, e, in, out);
	ring_retire(r, seq);
	return true;
}
