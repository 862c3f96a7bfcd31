/* SPDX-License-Identifier: MIT */
/*
 * softiwarp device and verbs: the ops table, the device (its event loop is
 * progress.c), protection domains, memory registration, endpoint creation
 * and work posting. Protocol work happens in cm.c (connection setup),
 * qp_tx.c / qp_rx.c / qp_rx_read.c (data) and qp.c (state); tunables.c
 * reads the environment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/clock.h" /* id_seed */
#include "softiwarp/siw.h"

/* ---------------- device ---------------- */

static void dev_free(struct siw_dev *dev)
{
	siw_progress_fini(dev);
	siw_mem_fini(dev);
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
	siw_tunables_read(&dev->tun);
	rc = siw_progress_init(dev);
	if (!rc)
		rc = siw_mem_init(dev);
	if (rc) {
		dev_free(dev);
		return rc;
	}
	/* STag keys differ from run to run, except for the fuzz hook which
	 * needs them reproducible */
	dev->key_seed = fuzz ? 0u : id_seed();
	if (attr && (attr->comp_mask & RPCRDMA_DEV_ATTR_FLAGS) &&
	    (attr->flags & RPCRDMA_DEV_F_PROGRESS_THREAD)) {
		rc = siw_progress_thread_start(dev);
		if (rc) {
			dev_free(dev);
			return rc;
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
	siw_progress_thread_stop(dev);
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
	caps->flags = RPCRDMA_DEV_CAP_REMOTE_INV | RPCRDMA_DEV_CAP_PEER_OPS_COUNTED |
		      siw_fault_caps(to_siw_dev(d));
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
	struct siw_mr *mr;
	int rc;

#ifdef RPCRDMA_TEST_HOOKS
	siw_dev_lock(dev);
	rc = siw_fault_reg(dev);
	siw_dev_unlock(dev);
	if (rc)
		return rc;
#endif
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	rc = siw_fault_pin(dev, mr, addr, length);
	if (rc) {
		free(mr);
		return rc;
	}
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
		(void)siw_fault_pin(dev, mr, NULL, 0);
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

	if (siw_fault_pin(dev, mr, addr, length))
		return -ENOMEM;
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

static int siw_mr_bind_ep(struct rpcrdma_mr *m, struct rpcrdma_ep *e)
{
	struct siw_dev *dev = to_siw_dev(m->pd->dev);

	siw_dev_lock(dev);
	to_siw_mr(m)->scope = e ? to_siw_ep(e)->id : 0;
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
	(void)siw_fault_pin(dev, mr, NULL, 0);
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

/* Under AddressSanitizer endpoints come from the heap, where its leak
 * check sees them. */
#if defined(__SANITIZE_ADDRESS__)
#define SIW_EP_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIW_EP_HEAP 1
#endif
#endif
#ifndef SIW_EP_HEAP
#define SIW_EP_HEAP 0
#endif

/* Bytes of @n elements of @size, rounded up to 64 (products bounded by
 * SIW_MAX_QP_WR * SIW_MAX_SGE * 16: no overflow). */
static size_t ep_part(size_t n, size_t size)
{
	return (n * size + 63u) & ~(size_t)63u;
}

/*
 * An endpoint and every work slot it will use (nothing is allocated per
 * request), in one anonymous mapping: the kernel gives it zeroed pages as
 * they are first touched, so an idle endpoint holds the few pages it used
 * (a 512-deep send queue is 44 kB, of which a connection that made a few
 * calls touched one page), and unmapping gives them all back at once (no
 * free heap chunks left resident after bursts of connections).
 */
static struct siw_ep *ep_map(uint32_t swr, uint32_t ssge, uint32_t rwr, uint32_t rsge, uint32_t ord,
			     uint32_t ird)
{
	size_t off[7], len = 0;
	struct siw_ep *ep;
	uint8_t *p;

	off[0] = len, len += ep_part(1, sizeof(*ep));
	off[1] = len, len += ep_part(swr, sizeof(*ep->sq));
	off[2] = len, len += ep_part((size_t)swr * ssge, sizeof(*ep->sq_sge));
	off[3] = len, len += ep_part(rwr, sizeof(*ep->rq));
	off[4] = len, len += ep_part((size_t)rwr * rsge, sizeof(*ep->rq_sge));
	off[5] = len, len += ep_part(ord, sizeof(*ep->orq));
	off[6] = len, len += ep_part(ird, sizeof(*ep->irq));
#if SIW_EP_HEAP
	p = calloc(1, len);
	if (!p)
		return NULL;
#else
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#endif
	ep = (struct siw_ep *)(void *)p;
	ep->map_len = len;
	ep->sq = (struct siw_wqe *)(void *)(p + off[1]);
	ep->sq_sge = (struct rpcrdma_sge *)(void *)(p + off[2]);
	ep->rq = (struct siw_rqe *)(void *)(p + off[3]);
	ep->rq_sge = (struct rpcrdma_sge *)(void *)(p + off[4]);
	ep->orq = (uint32_t *)(void *)(p + off[5]);
	ep->irq = (struct siw_irqe *)(void *)(p + off[6]);
	ep->orq_cap = ord;
	ep->irq_cap = ird;
	return ep;
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
	struct siw_srq *srq =
	    (m & RPCRDMA_EP_ATTR_SRQ) ? container_of(attr->srq, struct siw_srq, base) : NULL;

	if (srq) {
		/* one slot: the receive of the message arriving now (srq.c) */
		rwr = 1;
		rsge = srq->max_sge;
	}

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
	ep = ep_map(swr, ssge ? ssge : 1u, rwr, rsge ? rsge : 1u, ord ? ord : 1u, ird ? ird : 1u);
	if (!ep)
		return -ENOMEM;
	/* a slot's SGE pointer is set when it is posted: writing them all
	 * here would make every page of the queues resident (ep_map) */
	ep->base.dev = &dev->base;
	ep->base.pd = &pd->base;
	if (m & RPCRDMA_EP_ATTR_CONTEXT)
		ep->base.context = attr->context;
	ep->poll.kind = SIW_POLL_EP;
	ep->dev = dev;
	ep->pd = pd;
	ep->id = ++dev->next_ep_id;
	ep->fd = -1;
	ep->max_send_wr = swr;
	ep->max_recv_wr = rwr;
	ep->srq = srq;
	if (srq)
		srq->refs++;
	ep->max_send_sge = ssge;
	ep->max_recv_sge = rsge;
	ep->ird = ird;
	ep->ord = ord;
	ep->eff_ord = ord;
	ep->max_ulpdu = ulpdu;
	ep->timeout_ms =
	    attr_or(m, RPCRDMA_EP_ATTR_TIMEOUT, attr->connect_timeout_ms, SIW_DEF_TIMEOUT);
	/* the rest of the connection's shape: the device's tunables */
	ep->sockbuf = (m & RPCRDMA_EP_ATTR_SOCKBUF) ? attr->sockbuf : dev->tun.sockbuf;
	ep->nudge_ms = dev->tun.nudge_ms;
	ep->tx_cap = dev->tun.tx_batch;
	ep->tx_cap_crc = dev->tun.tx_batch_crc;
	ep->tx_cap_rresp = dev->tun.tx_rresp;
	ep->rx_spin_ns = dev->tun.rx_spin_ns;
	ep->rx.pred_read = dev->tun.rx_predict;
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
	free(ep->rx.replay);
#if SIW_EP_HEAP
	free(ep);
#else
	munmap(ep, ep->map_len);
#endif
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
	if (ep->evch) {
		siw_evch_purge(ep->evch, e);
		ep->evch->refs--;
	}
	if (ep->srq)
		ep->srq->refs--;
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
	uint32_t slot;

	if (num_sge > ep->max_recv_sge || (num_sge && !sg) || ep->srq)
		return -EINVAL;
	if (ep->used && ep_dead(ep)) {
		struct siw_rqe tmp = {.wr_id = wr_id};

		(void)siw_rq_complete(ep, &tmp, RPCRDMA_WC_WR_FLUSH_ERR, 0, 0, 0);
		return 0;
	}
	if (ep->rq_tail - ep->rq_head >= ep->max_recv_wr)
		return -ENOMEM;
	slot = ep->rq_tail % ep->max_recv_wr;
	r = &ep->rq[slot];
	r->sge = &ep->rq_sge[(size_t)slot * (ep->max_recv_sge ? ep->max_recv_sge : 1u)];
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
	uint32_t slot;
	ssize_t sent;

	if (!ep->used)
		return -ENOTCONN;
#ifdef RPCRDMA_TEST_HOOKS
	siw_fault_post(ep);
#endif
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
	slot = ep->sq_tail % ep->max_send_wr;
	w = &ep->sq[slot];
	w->sge = &ep->sq_sge[(size_t)slot * (ep->max_send_sge ? ep->max_send_sge : 1u)];
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
    .mr_bind_ep = siw_mr_bind_ep,
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
    .cq_resize = siw_cq_resize,
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
    .srq_create = siw_srq_create,
    .srq_destroy = siw_srq_destroy,
    .post_srq_recv = siw_post_srq_recv,
    .srq_resize = siw_srq_resize,
    .srq_trim = siw_srq_trim,
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
