/* SPDX-License-Identifier: MIT */
/*
 * Inside the provider interface: the base objects every provider embeds
 * first in its own objects (and converts back from with container_of), and
 * the ops table a provider fills with designated initialisers. Entry points
 * in dispatch.c check arguments common to every provider, then call the op;
 * an op a provider leaves NULL is replaced by a dummy that returns
 * -EOPNOTSUPP when the table is registered (rpcrdma_prov_fill_dummies()).
 */
#ifndef RPCRDMA_PROVIDER_INT_H
#define RPCRDMA_PROVIDER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/provider.h"

#ifndef container_of
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#endif

struct rpcrdma_dev_ops;

/* Base objects: fields here are read by dispatch.c and by nobody else above
 * the provider. */
struct rpcrdma_dev {
	const struct rpcrdma_dev_ops *ops;
	const char *name; /* provider name, static storage */
};

struct rpcrdma_pd {
	struct rpcrdma_dev *dev;
};

struct rpcrdma_mr {
	struct rpcrdma_pd *pd;
};

struct rpcrdma_cq {
	struct rpcrdma_dev *dev;
	void *context;
};

struct rpcrdma_evch {
	struct rpcrdma_dev *dev;
	void *context;
};

struct rpcrdma_ep {
	struct rpcrdma_dev *dev;
	struct rpcrdma_pd *pd;
	void *context;
};

struct rpcrdma_listener {
	struct rpcrdma_dev *dev;
	void *context;
};

struct rpcrdma_conn_req {
	struct rpcrdma_dev *dev;
};

struct rpcrdma_srq {
	struct rpcrdma_pd *pd;
	void *context;
};

/* The ops table, sorted by object. Every op returns 0 or -errno unless it
 * says otherwise; arguments were checked for NULL by dispatch.c. */
struct rpcrdma_dev_ops {
	int (*close)(struct rpcrdma_dev *dev);
	int (*query)(struct rpcrdma_dev *dev, struct rpcrdma_dev_caps *caps);
	int (*get_fd)(const struct rpcrdma_dev *dev);
	int (*progress)(struct rpcrdma_dev *dev, int timeout_ms);

	int (*pd_alloc)(struct rpcrdma_dev *dev, struct rpcrdma_pd **out);
	int (*pd_free)(struct rpcrdma_pd *pd);

	int (*mr_reg)(struct rpcrdma_pd *pd, void *addr, size_t length, unsigned int access,
		      struct rpcrdma_mr **out);
	int (*mr_rereg)(struct rpcrdma_mr *mr, void *addr, size_t length, unsigned int access);
	int (*mr_invalidate)(struct rpcrdma_mr *mr);
	int (*mr_dereg)(struct rpcrdma_mr *mr);
	/* rpcrdma_mr_bind_ep; @ep is NULL or of the MR's PD */
	int (*mr_bind_ep)(struct rpcrdma_mr *mr, struct rpcrdma_ep *ep);
	/* Never fail; take no lock beyond what the provider needs. */
	uint32_t (*mr_stag)(const struct rpcrdma_mr *mr);
	bool (*mr_valid)(const struct rpcrdma_mr *mr);
	uint64_t (*mr_offset)(const struct rpcrdma_mr *mr);
	size_t (*mr_length)(const struct rpcrdma_mr *mr);

	int (*cq_create)(struct rpcrdma_dev *dev, const struct rpcrdma_cq_attr *attr,
			 struct rpcrdma_cq **out);
	int (*cq_destroy)(struct rpcrdma_cq *cq);
	int (*cq_poll)(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n);
	int (*cq_req_notify)(struct rpcrdma_cq *cq, bool solicited_only);
	int (*cq_get_fd)(const struct rpcrdma_cq *cq);
	int (*cq_ack_notify)(struct rpcrdma_cq *cq);
	/* optional (NULL: rpcrdma_cq_resize() says -EOPNOTSUPP) */
	int (*cq_resize)(struct rpcrdma_cq *cq, uint32_t cqe);

	int (*evch_create)(struct rpcrdma_dev *dev, const struct rpcrdma_evch_attr *attr,
			   struct rpcrdma_evch **out);
	int (*evch_destroy)(struct rpcrdma_evch *ch);
	int (*evch_get)(struct rpcrdma_evch *ch, struct rpcrdma_event *ev);
	int (*evch_get_fd)(const struct rpcrdma_evch *ch);

	int (*ep_create)(struct rpcrdma_pd *pd, const struct rpcrdma_ep_attr *attr,
			 struct rpcrdma_ep **out);
	int (*ep_destroy)(struct rpcrdma_ep *ep);
	int (*ep_query_stats)(struct rpcrdma_ep *ep, struct rpcrdma_ep_stats *st);
	int (*ep_query_conn)(struct rpcrdma_ep *ep, struct rpcrdma_ep_conn_info *ci);
	int (*connect)(struct rpcrdma_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		       const void *pdata, size_t len);
	int (*listen)(struct rpcrdma_dev *dev, struct rpcrdma_evch *evch,
		      const struct sockaddr *addr, socklen_t addrlen, int backlog, void *context,
		      struct rpcrdma_listener **out);
	int (*listener_destroy)(struct rpcrdma_listener *l);
	int (*listener_addr)(const struct rpcrdma_listener *l, struct sockaddr_storage *addr);
	int (*accept)(struct rpcrdma_conn_req *req, struct rpcrdma_ep *ep, const void *pdata,
		      size_t len);
	int (*reject)(struct rpcrdma_conn_req *req, const void *pdata, size_t len);
	int (*disconnect)(struct rpcrdma_ep *ep);

	int (*post_recv)(struct rpcrdma_ep *ep, uint64_t wr_id, const struct rpcrdma_sge *sg,
			 unsigned int num_sge);
	int (*post_send)(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr);
	/* Optional shared receive queue (NULL: -EOPNOTSUPP). */
	int (*srq_create)(struct rpcrdma_pd *pd, const struct rpcrdma_srq_attr *attr,
			  struct rpcrdma_srq **out);
	int (*srq_destroy)(struct rpcrdma_srq *srq);
	int (*post_srq_recv)(struct rpcrdma_srq *srq, uint64_t wr_id, const struct rpcrdma_sge *sg,
			     unsigned int num_sge);
	int (*srq_resize)(struct rpcrdma_srq *srq, uint32_t max_wr);
	int (*srq_trim)(struct rpcrdma_srq *srq, uint32_t keep, size_t *bytes);
	/* Optional: start work held by RPCRDMA_SEND_DEFER. NULL means the
	 * provider never holds work (rpcrdma_ep_flush() returns 0). */
	int (*ep_flush)(struct rpcrdma_ep *ep);
	/* Optional: progress, then poll @cq in the same internal critical
	 * section (rpcrdma_dev_progress_poll()). NULL: progress + cq_poll. */
	int (*progress_poll)(struct rpcrdma_dev *dev, int timeout_ms, struct rpcrdma_cq *cq,
			     struct rpcrdma_wc *wc, int n, int *npolled);
	/* Optional: receives then a Send in one internal critical section
	 * (rpcrdma_post_send_recv(); arguments checked by dispatch.c except
	 * what only the provider knows). NULL: post_recv each, then post_send. */
	int (*post_send_recv)(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr,
			      const struct rpcrdma_recv_wr *rwr, unsigned int nrwr,
			      unsigned int *nposted);
};

/* A provider known to the registry. open() builds a device; it may return
 * -ENODEV when the provider is built in but has no usable device (or none
 * named attr->device). list() is rpcrdma_dev_list() for this provider; NULL
 * means the provider has exactly one device, named after the provider, and
 * open() then sees no RPCRDMA_DEV_ATTR_DEVICE (registry.c checks the name). */
struct rpcrdma_provider {
	const char *name;
	int (*open)(const struct rpcrdma_dev_attr *attr, struct rpcrdma_dev **out);
	int (*list)(struct rpcrdma_dev_info *out, int n);
};

/* Replace every NULL op in @ops by its -EOPNOTSUPP dummy (dummy_ops.c). */
void rpcrdma_prov_fill_dummies(struct rpcrdma_dev_ops *ops);

/* The built-in providers (softiwarp always; verbs when built). */
extern const struct rpcrdma_provider rpcrdma_softiwarp_provider;
#ifdef RPCRDMA_HAVE_VERBS
extern const struct rpcrdma_provider rpcrdma_verbs_provider;
#endif

#endif
