/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's shared receive queues (ibv_create_srq on the PD),
 * for the devices that have them (ibv_device_attr.max_srq > 0; the others
 * keep -EOPNOTSUPP and their callers a receive queue per endpoint).
 *
 * A receive posted here is held in a slot (the caller's wr_id and a copy
 * of its SGEs) until its completion: the hardware wr_id names the queue
 * and the slot (SRQ_BIT | id << 32 | slot), because the completion comes
 * on the recv CQ of whichever QP took the receive, and that endpoint may
 * be gone by then. A completion of a QP we no longer know (destroyed: its
 * completions are dropped, as those of its own queues are) puts the
 * receive back into the queue from the slot's copy, so that the caller's
 * buffer stays posted as the contract says (only the endpoint that took a
 * receive flushes it). max_wr and max_sge beyond the device's limits
 * (max_srq_wr, max_srq_sge, reported in rpcrdma_dev_caps.max_srq_wr) are
 * refused with -EINVAL, as softiwarp does: the caller learns the limit
 * from rpcrdma_dev_query() and sizes its pool by it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/verbs/verbs.h"

static struct vsrq *srq_find(struct vdev *d, uint32_t id)
{
	struct vsrq *q = d->srqs;

	while (q && q->id != id)
		q = q->next;
	return q;
}

/* Grow the slot table to @n slots; the new ones are free. */
static int slots_grow(struct vsrq *q, uint32_t n)
{
	struct vsrq_slot *s;
	struct rpcrdma_sge *sg;
	uint32_t *fr;

	if (n <= q->nslots)
		return 0;
	s = realloc(q->s, (size_t)n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	q->s = s;
	sg = realloc(q->sges, (size_t)n * q->max_sge * sizeof(*sg));
	if (!sg)
		return -ENOMEM;
	q->sges = sg;
	fr = realloc(q->free, (size_t)n * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	q->free = fr;
	for (uint32_t i = q->nslots; i < n; i++) {
		memset(&q->s[i], 0, sizeof(q->s[i]));
		q->free[q->nfree++] = n - 1 - (i - q->nslots);
	}
	q->nslots = n;
	return 0;
}

static void srq_free(struct vsrq *q)
{
	free(q->s);
	free(q->sges);
	free(q->free);
	free(q);
}

int verbs_srq_create(struct rpcrdma_pd *pd, const struct rpcrdma_srq_attr *attr,
		     struct rpcrdma_srq **out)
{
	struct vpd *p = container_of(pd, struct vpd, base);
	struct vdev *d = vdev_of(pd->dev);
	uint32_t sge = attr->max_sge ? attr->max_sge : 1;
	struct ibv_srq_init_attr ia;
	struct vsrq *q;
	int rc;

	if (d->attr.max_srq <= 0 || d->attr.max_srq_wr <= 0)
		return -EOPNOTSUPP;
	if (attr->max_wr == 0 || attr->max_wr > (uint32_t)d->attr.max_srq_wr ||
	    sge > (uint32_t)d->attr.max_srq_sge || sge > VERBS_MAX_SGE)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->base.pd = pd;
	q->base.context = (attr->comp_mask & RPCRDMA_SRQ_ATTR_CONTEXT) ? attr->context : NULL;
	q->dev = d;
	q->pd = p;
	q->max_sge = sge;
	q->max_wr = attr->max_wr;
	rc = slots_grow(q, attr->max_wr);
	if (rc) {
		srq_free(q);
		return rc;
	}
	memset(&ia, 0, sizeof(ia));
	ia.attr.max_wr = attr->max_wr;
	ia.attr.max_sge = sge;
	q->srq = ibv_create_srq(p->pd, &ia);
	if (!q->srq) {
		rc = verbs_errno(ENOMEM);
		srq_free(q);
		return rc;
	}
	/* the device may have made it larger (written back, as rxe rounds) */
	q->hw_max_wr = (uint32_t)ia.attr.max_wr > q->max_wr ? (uint32_t)ia.attr.max_wr : q->max_wr;
	pthread_mutex_lock(&d->lock);
	q->id = ++d->srq_ids & SRQ_ID_MASK;
	q->next = d->srqs;
	d->srqs = q;
	p->nsrq++;
	pthread_mutex_unlock(&d->lock);
	*out = &q->base;
	return 0;
}

int verbs_srq_destroy(struct rpcrdma_srq *srq)
{
	struct vsrq *q = container_of(srq, struct vsrq, base), **pp;
	struct vdev *d = q->dev;

	pthread_mutex_lock(&d->lock);
	if (q->nep) {
		pthread_mutex_unlock(&d->lock);
		return -EBUSY;
	}
	for (pp = &d->srqs; *pp != q; pp = &(*pp)->next)
		;
	*pp = q->next;
	q->pd->nsrq--;
	pthread_mutex_unlock(&d->lock);
	(void)ibv_destroy_srq(q->srq);
	srq_free(q);
	return 0;
}

/* Locked: hand slot @i to the hardware. */
static int hw_post(struct vsrq *q, uint32_t i)
{
	struct ibv_sge sge[VERBS_MAX_SGE];
	struct vsrq_slot *s = &q->s[i];
	struct ibv_recv_wr wr = {.wr_id = SRQ_BIT | ((uint64_t)q->id << 32) | i,
				 .sg_list = sge,
				 .num_sge = (int)s->nsge},
			   *bad;
	uint32_t total;

	verbs_to_ibv_sges(q->dev, &q->sges[(size_t)i * q->max_sge], s->nsge, sge, &total);
	return ibv_post_srq_recv(q->srq, &wr, &bad);
}

int verbs_post_srq_recv(struct rpcrdma_srq *srq, uint64_t wr_id, const struct rpcrdma_sge *sg,
			unsigned int num_sge)
{
	struct vsrq *q = container_of(srq, struct vsrq, base);
	uint32_t i;
	int rc;

	if (num_sge > q->max_sge)
		return -EINVAL;
	pthread_mutex_lock(&q->dev->lock);
	if (q->nslots - q->nfree >= q->max_wr) {
		pthread_mutex_unlock(&q->dev->lock);
		return -ENOMEM;
	}
	i = q->free[--q->nfree];
	q->s[i].wr_id = wr_id;
	q->s[i].nsge = num_sge;
	q->s[i].busy = true;
	memcpy(&q->sges[(size_t)i * q->max_sge], sg, num_sge * sizeof(*sg));
	rc = hw_post(q, i);
	if (rc) {
		q->s[i].busy = false;
		q->free[q->nfree++] = i;
		rc = rc == ENOMEM ? -ENOMEM : -rc;
	}
	pthread_mutex_unlock(&q->dev->lock);
	return rc;
}

int verbs_srq_resize(struct rpcrdma_srq *srq, uint32_t max_wr)
{
	struct vsrq *q = container_of(srq, struct vsrq, base);
	struct ibv_srq_attr a = {.max_wr = max_wr};
	int rc = 0;

	pthread_mutex_lock(&q->dev->lock);
	if (max_wr > (uint32_t)q->dev->attr.max_srq_wr)
		rc = -EINVAL;
	else if (q->nslots - q->nfree > max_wr)
		rc = -EBUSY;
	else if (max_wr > q->hw_max_wr) /* a queue only grows in the hardware */
		rc = ibv_modify_srq(q->srq, &a, IBV_SRQ_MAX_WR) ? verbs_errno(EINVAL) : 0;
	if (!rc && max_wr > q->hw_max_wr)
		q->hw_max_wr = max_wr;
	/* the slot table never shrinks: slots still posted keep their index */
	if (!rc)
		rc = slots_grow(q, max_wr);
	if (!rc)
		q->max_wr = max_wr;
	pthread_mutex_unlock(&q->dev->lock);
	return rc;
}

bool verbs_srq_translate(struct vdev *d, struct vep *e, const struct ibv_wc *in,
			 struct rpcrdma_wc *out)
{
	struct vsrq *q = srq_find(d, (uint32_t)(in->wr_id >> 32) & SRQ_ID_MASK);
	uint32_t i = (uint32_t)in->wr_id;
	struct vsrq_slot *s;

	if (!q || i >= q->nslots || !q->s[i].busy)
		return false;
	s = &q->s[i];
	if (!e) {
		/* its endpoint is gone: the receive is the queue's again */
		if (hw_post(q, i)) {
			s->busy = false;
			q->free[q->nfree++] = i;
		}
		return false;
	}
	memset(out, 0, sizeof(*out));
	out->wr_id = s->wr_id;
	out->opcode = RPCRDMA_WC_RECV;
	out->status = verbs_map_status(in->status);
	out->vendor_err = in->status == IBV_WC_SUCCESS ? 0 : in->vendor_err;
	out->ep = &e->base;
	out->byte_len = in->byte_len;
	s->busy = false;
	q->free[q->nfree++] = i;
	return true;
}
