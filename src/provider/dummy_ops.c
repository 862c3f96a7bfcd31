/* SPDX-License-Identifier: MIT */
/*
 * Dummy ops (rdma-core style): an op a provider does not implement answers
 * -EOPNOTSUPP instead of crashing on a NULL pointer, the fd getters
 * included (no fd to wait on). Getters that cannot fail answer a neutral
 * value (STag 0, invalid, offset/length 0).
 */
#include <errno.h>

#include "provider/provider_int.h"

static int d_close(struct rpcrdma_dev *dev)
{
	(void)dev;
	return -EOPNOTSUPP;
}

static int d_query(struct rpcrdma_dev *dev, struct rpcrdma_dev_caps *caps)
{
	(void)dev;
	(void)caps;
	return -EOPNOTSUPP;
}

static int d_get_fd(const struct rpcrdma_dev *dev)
{
	(void)dev;
	return -EOPNOTSUPP;
}

static int d_progress(struct rpcrdma_dev *dev, int timeout_ms)
{
	(void)dev;
	(void)timeout_ms;
	return -EOPNOTSUPP;
}

static int d_pd_alloc(struct rpcrdma_dev *dev, struct rpcrdma_pd **out)
{
	(void)dev;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_pd_free(struct rpcrdma_pd *pd)
{
	(void)pd;
	return -EOPNOTSUPP;
}

static int d_mr_reg(struct rpcrdma_pd *pd, void *addr, size_t length, unsigned int access,
		    struct rpcrdma_mr **out)
{
	(void)pd;
	(void)addr;
	(void)length;
	(void)access;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_mr_rereg(struct rpcrdma_mr *mr, void *addr, size_t length, unsigned int access)
{
	(void)mr;
	(void)addr;
	(void)length;
	(void)access;
	return -EOPNOTSUPP;
}

static int d_mr_op(struct rpcrdma_mr *mr)
{
	(void)mr;
	return -EOPNOTSUPP;
}

static int d_mr_bind_ep(struct rpcrdma_mr *mr, struct rpcrdma_ep *ep)
{
	(void)mr;
	(void)ep;
	return -EOPNOTSUPP;
}

static uint32_t d_mr_stag(const struct rpcrdma_mr *mr)
{
	(void)mr;
	return 0;
}

static bool d_mr_valid(const struct rpcrdma_mr *mr)
{
	(void)mr;
	return false;
}

static uint64_t d_mr_offset(const struct rpcrdma_mr *mr)
{
	(void)mr;
	return 0;
}

static size_t d_mr_length(const struct rpcrdma_mr *mr)
{
	(void)mr;
	return 0;
}

static int d_cq_create(struct rpcrdma_dev *dev, const struct rpcrdma_cq_attr *attr,
		       struct rpcrdma_cq **out)
{
	(void)dev;
	(void)attr;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_cq_op(struct rpcrdma_cq *cq)
{
	(void)cq;
	return -EOPNOTSUPP;
}

static int d_cq_poll(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n)
{
	(void)cq;
	(void)wc;
	(void)n;
	return -EOPNOTSUPP;
}

static int d_cq_req_notify(struct rpcrdma_cq *cq, bool solicited_only)
{
	(void)cq;
	(void)solicited_only;
	return -EOPNOTSUPP;
}

static int d_cq_get_fd(const struct rpcrdma_cq *cq)
{
	(void)cq;
	return -EOPNOTSUPP;
}

static int d_cq_resize(struct rpcrdma_cq *cq, uint32_t cqe)
{
	(void)cq;
	(void)cqe;
	return -EOPNOTSUPP;
}

static int d_srq_create(struct rpcrdma_pd *pd, const struct rpcrdma_srq_attr *attr,
			struct rpcrdma_srq **out)
{
	(void)pd;
	(void)attr;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_srq_destroy(struct rpcrdma_srq *srq)
{
	(void)srq;
	return -EOPNOTSUPP;
}

static int d_post_srq_recv(struct rpcrdma_srq *srq, uint64_t wr_id, const struct rpcrdma_sge *sg,
			   unsigned int num_sge)
{
	(void)srq;
	(void)wr_id;
	(void)sg;
	(void)num_sge;
	return -EOPNOTSUPP;
}

static int d_srq_resize(struct rpcrdma_srq *srq, uint32_t max_wr)
{
	(void)srq;
	(void)max_wr;
	return -EOPNOTSUPP;
}

static int d_srq_trim(struct rpcrdma_srq *srq, uint32_t keep, size_t *bytes)
{
	(void)srq;
	(void)keep;
	(void)bytes;
	return -EOPNOTSUPP;
}

static int d_evch_create(struct rpcrdma_dev *dev, const struct rpcrdma_evch_attr *attr,
			 struct rpcrdma_evch **out)
{
	(void)dev;
	(void)attr;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_evch_destroy(struct rpcrdma_evch *ch)
{
	(void)ch;
	return -EOPNOTSUPP;
}

static int d_evch_get(struct rpcrdma_evch *ch, struct rpcrdma_event *ev)
{
	(void)ch;
	(void)ev;
	return -EOPNOTSUPP;
}

static int d_evch_get_fd(const struct rpcrdma_evch *ch)
{
	(void)ch;
	return -EOPNOTSUPP;
}

static int d_ep_create(struct rpcrdma_pd *pd, const struct rpcrdma_ep_attr *attr,
		       struct rpcrdma_ep **out)
{
	(void)pd;
	(void)attr;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_ep_op(struct rpcrdma_ep *ep)
{
	(void)ep;
	return -EOPNOTSUPP;
}

static int d_ep_query_stats(struct rpcrdma_ep *ep, struct rpcrdma_ep_stats *st)
{
	(void)ep;
	(void)st;
	return -EOPNOTSUPP;
}

static int d_ep_query_conn(struct rpcrdma_ep *ep, struct rpcrdma_ep_conn_info *ci)
{
	(void)ep;
	(void)ci;
	return -EOPNOTSUPP;
}

static int d_connect(struct rpcrdma_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		     const void *pdata, size_t len)
{
	(void)ep;
	(void)addr;
	(void)addrlen;
	(void)pdata;
	(void)len;
	return -EOPNOTSUPP;
}

static int d_listen(struct rpcrdma_dev *dev, struct rpcrdma_evch *evch, const struct sockaddr *addr,
		    socklen_t addrlen, int backlog, void *context, struct rpcrdma_listener **out)
{
	(void)dev;
	(void)evch;
	(void)addr;
	(void)addrlen;
	(void)backlog;
	(void)context;
	(void)out;
	return -EOPNOTSUPP;
}

static int d_listener_destroy(struct rpcrdma_listener *l)
{
	(void)l;
	return -EOPNOTSUPP;
}

static int d_listener_addr(const struct rpcrdma_listener *l, struct sockaddr_storage *addr)
{
	(void)l;
	(void)addr;
	return -EOPNOTSUPP;
}

static int d_accept(struct rpcrdma_conn_req *req, struct rpcrdma_ep *ep, const void *pdata,
		    size_t len)
{
	(void)req;
	(void)ep;
	(void)pdata;
	(void)len;
	return -EOPNOTSUPP;
}

static int d_reject(struct rpcrdma_conn_req *req, const void *pdata, size_t len)
{
	(void)req;
	(void)pdata;
	(void)len;
	return -EOPNOTSUPP;
}

static int d_post_recv(struct rpcrdma_ep *ep, uint64_t wr_id, const struct rpcrdma_sge *sg,
		       unsigned int num_sge)
{
	(void)ep;
	(void)wr_id;
	(void)sg;
	(void)num_sge;
	return -EOPNOTSUPP;
}

static int d_post_send(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr)
{
	(void)ep;
	(void)wr;
	return -EOPNOTSUPP;
}

#define FILL(op, fn)                                                                               \
	do {                                                                                       \
		if (!ops->op)                                                                      \
			ops->op = fn;                                                              \
	} while (0)

void rpcrdma_prov_fill_dummies(struct rpcrdma_dev_ops *ops)
{
	FILL(close, d_close);
	FILL(query, d_query);
	FILL(get_fd, d_get_fd);
	FILL(progress, d_progress);
	FILL(pd_alloc, d_pd_alloc);
	FILL(pd_free, d_pd_free);
	FILL(mr_reg, d_mr_reg);
	FILL(mr_rereg, d_mr_rereg);
	FILL(mr_invalidate, d_mr_op);
	FILL(mr_dereg, d_mr_op);
	FILL(mr_bind_ep, d_mr_bind_ep);
	FILL(mr_stag, d_mr_stag);
	FILL(mr_valid, d_mr_valid);
	FILL(mr_offset, d_mr_offset);
	FILL(mr_length, d_mr_length);
	FILL(cq_create, d_cq_create);
	FILL(cq_destroy, d_cq_op);
	FILL(cq_poll, d_cq_poll);
	FILL(cq_req_notify, d_cq_req_notify);
	FILL(cq_get_fd, d_cq_get_fd);
	FILL(cq_ack_notify, d_cq_op);
	FILL(cq_resize, d_cq_resize);
	FILL(srq_create, d_srq_create);
	FILL(srq_destroy, d_srq_destroy);
	FILL(post_srq_recv, d_post_srq_recv);
	FILL(srq_resize, d_srq_resize);
	FILL(srq_trim, d_srq_trim);
	FILL(evch_create, d_evch_create);
	FILL(evch_destroy, d_evch_destroy);
	FILL(evch_get, d_evch_get);
	FILL(evch_get_fd, d_evch_get_fd);
	FILL(ep_create, d_ep_create);
	FILL(ep_destroy, d_ep_op);
	FILL(ep_query_stats, d_ep_query_stats);
	FILL(ep_query_conn, d_ep_query_conn);
	FILL(connect, d_connect);
	FILL(listen, d_listen);
	FILL(listener_destroy, d_listener_destroy);
	FILL(listener_addr, d_listener_addr);
	FILL(accept, d_accept);
	FILL(reject, d_reject);
	FILL(disconnect, d_ep_op);
	FILL(post_recv, d_post_recv);
	FILL(post_send, d_post_send);
}
