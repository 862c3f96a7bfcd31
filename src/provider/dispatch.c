/* SPDX-License-Identifier: MIT */
/*
 * Public entry points of the provider interface: argument checks every
 * provider shares, then one indirect call through the device's ops table.
 * Nothing here knows which provider it talks to.
 */
#include <errno.h>
#include <string.h>

#include "provider/provider_int.h"

/* The two-step fallbacks of the combined entry points: kept out of line so
 * the common path (one indirect call) needs no stack frame. */
#define DISPATCH_FALLBACK __attribute__((noinline, cold))

RPCRDMA_API int rpcrdma_dev_close(struct rpcrdma_dev *dev)
{
	if (!dev)
		return -EINVAL;
	return dev->ops->close(dev);
}

RPCRDMA_API int rpcrdma_dev_query(struct rpcrdma_dev *dev, struct rpcrdma_dev_caps *caps)
{
	if (!dev || !caps)
		return -EINVAL;
	memset(caps, 0, sizeof(*caps));
	return dev->ops->query(dev, caps);
}

RPCRDMA_API const char *rpcrdma_dev_provider(const struct rpcrdma_dev *dev)
{
	return dev ? dev->name : "";
}

RPCRDMA_API int rpcrdma_dev_fd(const struct rpcrdma_dev *dev)
{
	if (!dev)
		return -EINVAL;
	return dev->ops->get_fd(dev);
}

RPCRDMA_API int rpcrdma_dev_progress(struct rpcrdma_dev *dev, int timeout_ms)
{
	if (!dev)
		return -EINVAL;
	return dev->ops->progress(dev, timeout_ms);
}

/* rpcrdma_dev_progress_poll() on a provider without the op: two steps. */
DISPATCH_FALLBACK static int progress_then_poll(struct rpcrdma_dev *dev, int timeout_ms,
						struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n,
						int *npolled)
{
	int rc = dev->ops->progress(dev, timeout_ms), m;

	if (rc > 0) {
		m = dev->ops->cq_poll(cq, wc, n);
		if (m > 0)
			*npolled = m;
	}
	return rc;
}

RPCRDMA_API int rpcrdma_dev_progress_poll(struct rpcrdma_dev *dev, int timeout_ms,
					  struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n,
					  int *npolled)
{
	if (!dev || !cq || cq->dev != dev || !wc || n < 0 || !npolled)
		return -EINVAL;
	*npolled = 0;
	if (dev->ops->progress_poll)
		return dev->ops->progress_poll(dev, timeout_ms, cq, wc, n, npolled);
	return progress_then_poll(dev, timeout_ms, cq, wc, n, npolled);
}

RPCRDMA_API int rpcrdma_pd_alloc(struct rpcrdma_dev *dev, struct rpcrdma_pd **out)
{
	if (!dev || !out)
		return -EINVAL;
	return dev->ops->pd_alloc(dev, out);
}

RPCRDMA_API int rpcrdma_pd_free(struct rpcrdma_pd *pd)
{
	if (!pd)
		return -EINVAL;
	return pd->dev->ops->pd_free(pd);
}

static int check_access(unsigned int access)
{
	if (access & ~(unsigned int)(RPCRDMA_ACCESS_LOCAL_WRITE | RPCRDMA_ACCESS_REMOTE_WRITE |
				     RPCRDMA_ACCESS_REMOTE_READ))
		return -EINVAL;
	/* As in verbs: remote write without local write makes no sense. */
	if ((access & RPCRDMA_ACCESS_REMOTE_WRITE) && !(access & RPCRDMA_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static int check_range(const void *addr, size_t length)
{
	if (length && !addr)
		return -EINVAL;
	if ((uintptr_t)addr > UINTPTR_MAX - length)
		return -EINVAL;
	return 0;
}

RPCRDMA_API int rpcrdma_mr_reg(struct rpcrdma_pd *pd, void *addr, size_t length,
			       unsigned int access, struct rpcrdma_mr **out)
{
	int rc;

	if (!pd || !out)
		return -EINVAL;
	rc = check_access(access);
	if (!rc)
		rc = check_range(addr, length);
	if (rc)
		return rc;
	return pd->dev->ops->mr_reg(pd, addr, length, access, out);
}

RPCRDMA_API int rpcrdma_mr_rereg(struct rpcrdma_mr *mr, void *addr, size_t length,
				 unsigned int access)
{
	int rc;

	if (!mr)
		return -EINVAL;
	rc = check_access(access);
	if (!rc)
		rc = check_range(addr, length);
	if (rc)
		return rc;
	return mr->pd->dev->ops->mr_rereg(mr, addr, length, access);
}

RPCRDMA_API int rpcrdma_mr_invalidate(struct rpcrdma_mr *mr)
{
	if (!mr)
		return -EINVAL;
	return mr->pd->dev->ops->mr_invalidate(mr);
}

RPCRDMA_API int rpcrdma_mr_dereg(struct rpcrdma_mr *mr)
{
	if (!mr)
		return -EINVAL;
	return mr->pd->dev->ops->mr_dereg(mr);
}

RPCRDMA_API int rpcrdma_mr_bind_ep(struct rpcrdma_mr *mr, struct rpcrdma_ep *ep)
{
	if (!mr || (ep && ep->pd != mr->pd))
		return -EINVAL;
	return mr->pd->dev->ops->mr_bind_ep(mr, ep);
}

RPCRDMA_API uint32_t rpcrdma_mr_stag(const struct rpcrdma_mr *mr)
{
	return mr ? mr->pd->dev->ops->mr_stag(mr) : 0;
}

RPCRDMA_API bool rpcrdma_mr_valid(const struct rpcrdma_mr *mr)
{
	return mr ? mr->pd->dev->ops->mr_valid(mr) : false;
}

RPCRDMA_API uint64_t rpcrdma_mr_offset(const struct rpcrdma_mr *mr)
{
	return mr ? mr->pd->dev->ops->mr_offset(mr) : 0;
}

RPCRDMA_API size_t rpcrdma_mr_length(const struct rpcrdma_mr *mr)
{
	return mr ? mr->pd->dev->ops->mr_length(mr) : 0;
}

RPCRDMA_API int rpcrdma_cq_create(struct rpcrdma_dev *dev, const struct rpcrdma_cq_attr *attr,
				  struct rpcrdma_cq **out)
{
	if (!dev || !attr || !out || attr->cqe == 0)
		return -EINVAL;
	return dev->ops->cq_create(dev, attr, out);
}

RPCRDMA_API int rpcrdma_cq_destroy(struct rpcrdma_cq *cq)
{
	if (!cq)
		return -EINVAL;
	return cq->dev->ops->cq_destroy(cq);
}

RPCRDMA_API void *rpcrdma_cq_context(const struct rpcrdma_cq *cq)
{
	return cq ? cq->context : NULL;
}

RPCRDMA_API int rpcrdma_cq_poll(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n)
{
	if (!cq || !wc || n < 0)
		return -EINVAL;
	return cq->dev->ops->cq_poll(cq, wc, n);
}

RPCRDMA_API int rpcrdma_cq_req_notify(struct rpcrdma_cq *cq, bool solicited_only)
{
	if (!cq)
		return -EINVAL;
	return cq->dev->ops->cq_req_notify(cq, solicited_only);
}

RPCRDMA_API int rpcrdma_cq_fd(const struct rpcrdma_cq *cq)
{
	if (!cq)
		return -EINVAL;
	return cq->dev->ops->cq_get_fd(cq);
}

RPCRDMA_API int rpcrdma_cq_ack_notify(struct rpcrdma_cq *cq)
{
	if (!cq)
		return -EINVAL;
	return cq->dev->ops->cq_ack_notify(cq);
}

RPCRDMA_API int rpcrdma_cq_resize(struct rpcrdma_cq *cq, uint32_t cqe)
{
	if (!cq || cqe == 0)
		return -EINVAL;
	/* optional: the caller then makes a CQ per endpoint */
	if (!cq->dev->ops->cq_resize)
		return -EOPNOTSUPP;
	return cq->dev->ops->cq_resize(cq, cqe);
}

RPCRDMA_API int rpcrdma_evch_create(struct rpcrdma_dev *dev, const struct rpcrdma_evch_attr *attr,
				    struct rpcrdma_evch **out)
{
	if (!dev || !out)
		return -EINVAL;
	return dev->ops->evch_create(dev, attr, out);
}

RPCRDMA_API int rpcrdma_evch_destroy(struct rpcrdma_evch *ch)
{
	if (!ch)
		return -EINVAL;
	return ch->dev->ops->evch_destroy(ch);
}

RPCRDMA_API int rpcrdma_evch_get(struct rpcrdma_evch *ch, struct rpcrdma_event *ev)
{
	if (!ch || !ev)
		return -EINVAL;
	return ch->dev->ops->evch_get(ch, ev);
}

RPCRDMA_API int rpcrdma_evch_fd(const struct rpcrdma_evch *ch)
{
	if (!ch)
		return -EINVAL;
	return ch->dev->ops->evch_get_fd(ch);
}

RPCRDMA_API int rpcrdma_ep_create(struct rpcrdma_pd *pd, const struct rpcrdma_ep_attr *attr,
				  struct rpcrdma_ep **out)
{
	if (!pd || !attr || !out || !attr->send_cq || !attr->recv_cq || !attr->evch)
		return -EINVAL;
	if (attr->send_cq->dev != pd->dev || attr->recv_cq->dev != pd->dev ||
	    attr->evch->dev != pd->dev)
		return -EINVAL;
	if ((attr->comp_mask & RPCRDMA_EP_ATTR_SRQ) && (!attr->srq || attr->srq->pd != pd))
		return -EINVAL;
	return pd->dev->ops->ep_create(pd, attr, out);
}

RPCRDMA_API int rpcrdma_ep_destroy(struct rpcrdma_ep *ep)
{
	if (!ep)
		return -EINVAL;
	return ep->dev->ops->ep_destroy(ep);
}

RPCRDMA_API void *rpcrdma_ep_context(const struct rpcrdma_ep *ep)
{
	return ep ? ep->context : NULL;
}

RPCRDMA_API int rpcrdma_ep_query_stats(struct rpcrdma_ep *ep, struct rpcrdma_ep_stats *st)
{
	if (!ep || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	return ep->dev->ops->ep_query_stats(ep, st);
}

RPCRDMA_API int rpcrdma_ep_query_conn(struct rpcrdma_ep *ep, struct rpcrdma_ep_conn_info *ci)
{
	if (!ep || !ci)
		return -EINVAL;
	memset(ci, 0, sizeof(*ci));
	return ep->dev->ops->ep_query_conn(ep, ci);
}

static int check_pdata(const void *pdata, size_t len)
{
	if (len > RPCRDMA_MAX_PRIVATE_DATA || (len && !pdata))
		return -EINVAL;
	return 0;
}

RPCRDMA_API int rpcrdma_connect(struct rpcrdma_ep *ep, const struct sockaddr *addr,
				socklen_t addrlen, const void *pdata, size_t len)
{
	if (!ep || !addr || check_pdata(pdata, len))
		return -EINVAL;
	return ep->dev->ops->connect(ep, addr, addrlen, pdata, len);
}

RPCRDMA_API int rpcrdma_listen(struct rpcrdma_dev *dev, struct rpcrdma_evch *evch,
			       const struct sockaddr *addr, socklen_t addrlen, int backlog,
			       void *context, struct rpcrdma_listener **out)
{
	if (!dev || !evch || !addr || !out || evch->dev != dev)
		return -EINVAL;
	return dev->ops->listen(dev, evch, addr, addrlen, backlog, context, out);
}

RPCRDMA_API int rpcrdma_listener_destroy(struct rpcrdma_listener *l)
{
	if (!l)
		return -EINVAL;
	return l->dev->ops->listener_destroy(l);
}

RPCRDMA_API int rpcrdma_listener_addr(const struct rpcrdma_listener *l,
				      struct sockaddr_storage *addr)
{
	if (!l || !addr)
		return -EINVAL;
	return l->dev->ops->listener_addr(l, addr);
}

RPCRDMA_API int rpcrdma_accept(struct rpcrdma_conn_req *req, struct rpcrdma_ep *ep,
			       const void *pdata, size_t len)
{
	if (!req)
		return -EINVAL;
	if (!ep || ep->dev != req->dev || check_pdata(pdata, len)) {
		/* @req is consumed whatever the result (header contract). */
		(void)req->dev->ops->reject(req, NULL, 0);
		return -EINVAL;
	}
	return req->dev->ops->accept(req, ep, pdata, len);
}

RPCRDMA_API int rpcrdma_reject(struct rpcrdma_conn_req *req, const void *pdata, size_t len)
{
	if (!req)
		return -EINVAL;
	if (check_pdata(pdata, len)) {
		/* @req is consumed whatever the result */
		(void)req->dev->ops->reject(req, NULL, 0);
		return -EINVAL;
	}
	return req->dev->ops->reject(req, pdata, len);
}

RPCRDMA_API int rpcrdma_disconnect(struct rpcrdma_ep *ep)
{
	if (!ep)
		return -EINVAL;
	return ep->dev->ops->disconnect(ep);
}

RPCRDMA_API int rpcrdma_post_recv(struct rpcrdma_ep *ep, uint64_t wr_id,
				  const struct rpcrdma_sge *sg, unsigned int num_sge)
{
	if (!ep || (num_sge && !sg))
		return -EINVAL;
	return ep->dev->ops->post_recv(ep, wr_id, sg, num_sge);
}

RPCRDMA_API int rpcrdma_post_send(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr)
{
	if (!ep || !wr || (wr->num_sge && !wr->sg))
		return -EINVAL;
	return ep->dev->ops->post_send(ep, wr);
}

RPCRDMA_API int rpcrdma_srq_create(struct rpcrdma_pd *pd, const struct rpcrdma_srq_attr *attr,
				   struct rpcrdma_srq **out)
{
	if (!pd || !attr || !out || attr->max_wr == 0)
		return -EINVAL;
	/* optional: a server then keeps receives per connection */
	if (!pd->dev->ops->srq_create)
		return -EOPNOTSUPP;
	return pd->dev->ops->srq_create(pd, attr, out);
}

RPCRDMA_API int rpcrdma_srq_destroy(struct rpcrdma_srq *srq)
{
	if (!srq)
		return -EINVAL;
	return srq->pd->dev->ops->srq_destroy(srq);
}

RPCRDMA_API void *rpcrdma_srq_context(const struct rpcrdma_srq *srq)
{
	return srq ? srq->context : NULL;
}

RPCRDMA_API int rpcrdma_post_srq_recv(struct rpcrdma_srq *srq, uint64_t wr_id,
				      const struct rpcrdma_sge *sg, unsigned int num_sge)
{
	if (!srq || (num_sge && !sg))
		return -EINVAL;
	return srq->pd->dev->ops->post_srq_recv(srq, wr_id, sg, num_sge);
}

RPCRDMA_API int rpcrdma_srq_resize(struct rpcrdma_srq *srq, uint32_t max_wr)
{
	if (!srq || max_wr == 0)
		return -EINVAL;
	return srq->pd->dev->ops->srq_resize(srq, max_wr);
}

RPCRDMA_API int rpcrdma_srq_trim(struct rpcrdma_srq *srq, uint32_t keep, size_t *bytes)
{
	if (bytes)
		*bytes = 0;
	if (!srq)
		return -EINVAL;
	return srq->pd->dev->ops->srq_trim(srq, keep, bytes);
}

/* rpcrdma_post_send_recv() on a provider without the op: one by one. */
DISPATCH_FALLBACK static int post_send_recv_each(struct rpcrdma_ep *ep,
						 const struct rpcrdma_send_wr *wr,
						 const struct rpcrdma_recv_wr *rwr,
						 unsigned int nrwr, unsigned int *nposted)
{
	unsigned int i;
	int rc = 0;

	for (i = 0; i < nrwr; i++) {
		rc = rpcrdma_post_recv(ep, rwr[i].wr_id, rwr[i].sg, rwr[i].num_sge);
		if (rc)
			break;
	}
	if (nposted)
		*nposted = i;
	if (rc || !wr)
		return rc;
	return ep->dev->ops->post_send(ep, wr);
}

RPCRDMA_API int rpcrdma_post_send_recv(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr,
				       const struct rpcrdma_recv_wr *rwr, unsigned int nrwr,
				       unsigned int *nposted)
{
	/* A receive's SGE list is checked where it is posted (the op does
	 * what rpcrdma_post_recv() checks here). */
	if (!ep || (nrwr && !rwr) || (wr && wr->num_sge && !wr->sg)) {
		if (nposted)
			*nposted = 0;
		return -EINVAL;
	}
	if (ep->dev->ops->post_send_recv)
		return ep->dev->ops->post_send_recv(ep, wr, rwr, nrwr, nposted);
	return post_send_recv_each(ep, wr, rwr, nrwr, nposted);
}

RPCRDMA_API int rpcrdma_ep_flush(struct rpcrdma_ep *ep)
{
	if (!ep)
		return -EINVAL;
	/* no op: the provider never holds work, nothing to start */
	return ep->dev->ops->ep_flush ? ep->dev->ops->ep_flush(ep) : 0;
}
