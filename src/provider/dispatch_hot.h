/* SPDX-License-Identifier: MIT */
/*
 * The transport's own calls into the provider on the Version One NULL path
 * (issue 38): the op, without the argument checks of the public entry
 * points in dispatch.c. Those checks guard an application's arguments
 * (NULL objects, a CQ of another device, a negative count); the transport
 * passes its own endpoint, CQ, SRQ and arrays, valid by construction, so
 * on every call they were tests that could not fail plus a call. An op a
 * provider leaves NULL (the optional combined ops) goes through the public
 * entry point and its fallback, as before. Everything the op itself checks
 * (SGE bounds, lkeys, queue space, the endpoint's state) stays.
 */
#ifndef RPCRDMA_DISPATCH_HOT_H
#define RPCRDMA_DISPATCH_HOT_H

#include "provider/provider_int.h"

/* rpcrdma_post_send(); @ep and @wr non-NULL, @wr->sg set when it has SGEs. */
static inline int xprt_post_send(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr)
{
	return ep->dev->ops->post_send(ep, wr);
}

/* rpcrdma_post_send_recv(); @rwr set when @nrwr, @nposted non-NULL. */
static inline int xprt_post_send_recv(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr,
				      const struct rpcrdma_recv_wr *rwr, unsigned int nrwr,
				      unsigned int *nposted)
{
	if (ep->dev->ops->post_send_recv)
		return ep->dev->ops->post_send_recv(ep, wr, rwr, nrwr, nposted);
	return rpcrdma_post_send_recv(ep, wr, rwr, nrwr, nposted);
}

/* rpcrdma_post_srq_recv(); @srq non-NULL, @sg set when @num_sge. */
static inline int xprt_post_srq_recv(struct rpcrdma_srq *srq, uint64_t wr_id,
				     const struct rpcrdma_sge *sg, unsigned int num_sge)
{
	return srq->pd->dev->ops->post_srq_recv(srq, wr_id, sg, num_sge);
}

/* rpcrdma_cq_poll(); @cq and @wc non-NULL, @n >= 0. */
static inline int xprt_cq_poll(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n)
{
	return cq->dev->ops->cq_poll(cq, wc, n);
}

/* rpcrdma_dev_progress_poll(); @cq of @dev, @wc and @npolled non-NULL,
 * @n >= 0. */
static inline int xprt_dev_progress_poll(struct rpcrdma_dev *dev, int timeout_ms,
					 struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n,
					 int *npolled)
{
	if (dev->ops->progress_poll) {
		*npolled = 0;
		return dev->ops->progress_poll(dev, timeout_ms, cq, wc, n, npolled);
	}
	return rpcrdma_dev_progress_poll(dev, timeout_ms, cq, wc, n, npolled);
}

#endif
