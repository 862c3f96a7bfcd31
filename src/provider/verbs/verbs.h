/* SPDX-License-Identifier: MIT */
/*
 * The verbs provider's runtime state: the provider ops table backed by
 * rdma-core (libibverbs for PDs, MRs, CQs and QPs; librdmacm for
 * connections), so everything above include/rpcrdma/provider.h runs
 * unchanged on InfiniBand, RoCE and iWARP adapters and on the kernel's siw
 * and rxe.
 *
 * Files: device.c (device list, open, query, progress, PDs), mem.c (memory
 * registration, the STag map), cq.c (CQs, work completions, event
 * channels), cm.c (rdma_cm: connect, listen, accept, reject, disconnect,
 * connection events), qp.c (endpoints, work posting).
 *
 * One device is one ibv_context, and it is librdmacm's own
 * (rdma_get_devices()): rdma_cm resolves addresses to those contexts, and
 * rdma_create_qp() insists that the PD belongs to the cm_id's context. A
 * connection whose address resolves to another device fails (-ENODEV).
 *
 * Locking: one mutex per device (d->lock) guards every list, ring and
 * state below; libibverbs calls that post or poll are made under it too,
 * so completions are translated in the order the hardware gave them.
 * rdma_cm events are taken from the channel and acknowledged before the
 * lock is taken: rdma_destroy_id() (called under the lock) waits for the
 * acknowledgement of every event of its id.
 */
#ifndef RPCRDMA_VERBS_H
#define RPCRDMA_VERBS_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>

#include "provider/provider_int.h"

#define VERBS_PROVIDER_NAME "verbs"
#define VERBS_HASH          64u /* buckets of the STag and QP number maps */

struct vcq;
struct vep;
struct vevch;
struct vlistener;
struct vsrq;

/* Hardware wr_ids of shared receives (srq.c): SRQ_BIT | id << 32 | slot */
#define SRQ_BIT       (1ull << 62)
#define SRQ_ID_MASK   0x3fffffffu
#define VERBS_MAX_SGE 32u /* SGEs in one request (the stack copies of ibv_sge) */

struct vdev {
	struct rpcrdma_dev base;
	struct ibv_context **ctx_list; /* rdma_get_devices(); freed at close */
	struct ibv_context *ctx;       /* the device opened */
	struct rdma_event_channel *cm_ch;
	int epfd; /* the device fd: cm_ch and every CQ's completion channel */
	pthread_mutex_t lock;
	struct ibv_device_attr attr;
	struct ibv_port_attr port; /* port 1 */
	bool iwarp;
	/* objects alive, for close's -EBUSY */
	unsigned int npd, ncq, nevch, nep, nlistener;
	struct vcq *cqs;               /* every CQ (progress harvests them) */
	struct vep *eps;               /* every endpoint (cm events name them by id) */
	struct vlistener *listeners;   /* every listener */
	struct vmr *stags[VERBS_HASH]; /* registered MRs by STag */
	struct vep *qpns[VERBS_HASH];  /* endpoints with a QP, by QP number */
	/* Some devices give a registration different lkey and rkey: then SGEs
	 * (which carry the STag, our rkey) are translated through the map. */
	bool keys_differ;
	/* type-2 memory windows (rpcrdma_mr_bind_ep), and registrations
	 * scoped through one now */
	bool mw2;
	unsigned int nscoped;
	struct vsrq *srqs; /* every shared receive queue (completions name them by id) */
	uint32_t srq_ids;
};

struct vpd {
	struct rpcrdma_pd base;
	struct ibv_pd *pd;
	unsigned int nmr, nep, nsrq;
};

/* A registration. The STag is the rkey when the peer may access the
 * region, else the lkey. ibv_mr is NULL while invalid (deregistered).
 * Scoped (rpcrdma_mr_bind_ep): the region itself grants no remote access,
 * a type-2 memory window bound to @bound's QP does, and the STag is the
 * window's rkey; @bound is NULL once that endpoint is destroyed. */
struct vmr {
	struct rpcrdma_mr base;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct vep *bound;
	uint32_t bind_seq; /* the send slot of the window's Bind */
	void *addr;
	size_t length;
	unsigned int access;
	uint32_t stag, lkey;
	bool valid, hashed, scoped;
	struct vmr *hnext;
	char zbyte; /* what a zero-length region registers (verbs refuses 0) */
};

struct vcq {
	struct rpcrdma_cq base;
	struct vdev *dev;
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	bool armed;
	unsigned int nep;
	/* Completions taken from the hardware CQ by progress (which must say
	 * how many it made) or made up by the provider (flushes of work that
	 * never reached the QP), delivered before the hardware's. */
	struct rpcrdma_wc *ring;
	uint32_t cap, head, count;
	uint32_t fresh; /* pushed since progress last counted */
	struct vcq *next;
};

/* A receive posted to a shared queue: the caller's wr_id and SGEs (for
 * posting it again when the endpoint that took it is gone). */
struct vsrq_slot {
	uint64_t wr_id;
	uint32_t nsge;
	bool busy; /* handed to the hardware */
};

struct vsrq {
	struct rpcrdma_srq base;
	struct vdev *dev;
	struct vpd *pd;
	struct ibv_srq *srq;
	uint32_t id;
	uint32_t max_wr, max_sge; /* as asked (posting more says -ENOMEM) */
	uint32_t hw_max_wr;       /* what the device made (resize grows it) */
	struct vsrq_slot *s;
	struct rpcrdma_sge *sges; /* max_sge per slot */
	uint32_t *free;           /* free slot indices (a stack) */
	uint32_t nslots, nfree;
	unsigned int nep; /* endpoints created with it */
	struct vsrq *next;
};

struct vevch {
	struct rpcrdma_evch base;
	struct vdev *dev;
	int efd; /* eventfd, readable while events are queued */
	unsigned int users;
	struct rpcrdma_event *q;
	uint32_t cap, head, count;
};

enum vep_state {
	VEP_IDLE,       /* created, neither connect nor accept called */
	VEP_CONNECTING, /* resolving, connecting or accepted: work is held */
	VEP_CONNECTED,
	VEP_DOWN, /* failed or disconnected: work completes flushed */
};

/* A work request's slot: posting order, so a completion retires its slot
 * and every earlier unsignaled one (unsignaled Sends never complete on
 * their own); a signaled one waits for its own completion, which may come
 * later (Linux siw completes a Send posted after an RDMA Read before the
 * Read).
 * While the QP is not ready the request waits here with its SGEs. */
struct vslot {
	uint64_t wr_id;
	enum rpcrdma_wc_opcode opcode;
	uint32_t length;
	bool pending, signaled;
	bool quiet;                /* signaled by us only: its success is not reported */
	bool done;                 /* completed ahead of an earlier signaled slot */
	bool bind;                 /* our own Bind MW: reports nothing, flushes silently */
	struct rpcrdma_send_wr wr; /* pending sends: the request (sg -> sgl) */
	struct rpcrdma_sge *sgl;   /* pending: the SGE copies (max_*_sge) */
	uint32_t nsge;
};

struct vring {
	struct vslot *s;
	struct rpcrdma_sge *sges;
	uint32_t size, max_sge;
	uint32_t head, tail, posted; /* sequence numbers: retired, next, handed to the QP */
	uint32_t last_sig;           /* the last signaled Send's sequence number */
	uint32_t done_hi;            /* one past the latest completed slot */
};

struct vep {
	struct rpcrdma_ep base;
	struct vdev *dev;
	struct vpd *pd;
	struct vcq *scq, *rcq;
	struct vevch *evch;
	struct vsrq *srq; /* RPCRDMA_EP_ATTR_SRQ: receives come from it, rq unused */
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	uint32_t qpn;
	enum vep_state state;
	bool passive, disconnecting, down_reported;
	int down_status;
	uint64_t down_deadline_ns; /* DISCONNECTED waits for flushes until then */
	uint32_t max_send_sge, max_recv_sge, max_inline;
	uint32_t ird, ord;         /* asked for */
	uint32_t eff_ird, eff_ord; /* negotiated */
	uint32_t timeout_ms;
	uint8_t pdata[RPCRDMA_MAX_PRIVATE_DATA];
	uint16_t pdata_len;
	struct vring sq, rq;
	struct rpcrdma_ep_stats st;
	struct sockaddr_storage local, peer;
	struct vep *next, *qnext;
};

struct vlistener {
	struct rpcrdma_listener base;
	struct vdev *dev;
	struct vevch *evch;
	struct rdma_cm_id *id;
	struct vreq *reqs; /* unanswered requests */
	struct vlistener *next;
};

struct vreq {
	struct rpcrdma_conn_req base;
	struct vlistener *l;
	struct rdma_cm_id *id;
	uint8_t peer_rr, peer_depth; /* its responder_resources, initiator_depth */
	struct vreq *next;
};

static inline struct vdev *vdev_of(struct rpcrdma_dev *d)
{
	return container_of(d, struct vdev, base);
}

/* device.c */
uint64_t verbs_now_ns(void);
int verbs_errno(int fallback); /* -errno, or -@fallback when errno is 0 */
int verbs_set_nonblock(int fd);

/* mem.c */
int verbs_mr_reg(struct rpcrdma_pd *pd, void *addr, size_t length, unsigned int access,
		 struct rpcrdma_mr **out);
int verbs_mr_rereg(struct rpcrdma_mr *mr, void *addr, size_t length, unsigned int access);
int verbs_mr_invalidate(struct rpcrdma_mr *mr);
int verbs_mr_dereg(struct rpcrdma_mr *mr);
int verbs_mr_bind_ep(struct rpcrdma_mr *mr, struct rpcrdma_ep *ep);
/* Locked: @e goes away: the windows bound to its QP are freed first. */
void verbs_mr_unbind_ep(struct vdev *d, struct vep *e);
uint32_t verbs_mr_stag(const struct rpcrdma_mr *mr);
bool verbs_mr_valid(const struct rpcrdma_mr *mr);
uint64_t verbs_mr_offset(const struct rpcrdma_mr *mr);
size_t verbs_mr_length(const struct rpcrdma_mr *mr);
/* Locked: the registration of @stag, or NULL. */
struct vmr *verbs_mr_find(struct vdev *d, uint32_t stag);

/* cq.c */
int verbs_cq_create(struct rpcrdma_dev *dev, const struct rpcrdma_cq_attr *attr,
		    struct rpcrdma_cq **out);
int verbs_cq_destroy(struct rpcrdma_cq *cq);
int verbs_cq_poll(struct rpcrdma_cq *cq, struct rpcrdma_wc *wc, int n);
int verbs_cq_req_notify(struct rpcrdma_cq *cq, bool solicited_only);
int verbs_cq_get_fd(const struct rpcrdma_cq *cq);
int verbs_cq_ack_notify(struct rpcrdma_cq *cq);
/* Locked: move hardware completions into every CQ's ring (progress);
 * returns how many. Drains the completion channels first. */
int verbs_cq_harvest(struct vdev *d);
/* Locked: move @cq's hardware completions into its ring (counted by the
 * next harvest), which retires their send slots. */
void verbs_cq_reap(struct vcq *cq);
/* Locked: arm every CQ not armed yet (before progress blocks). */
void verbs_cq_arm_all(struct vdev *d);
/* Locked: add a made-up completion to @cq's ring. */
void verbs_cq_push(struct vcq *cq, const struct rpcrdma_wc *wc);
int verbs_evch_create(struct rpcrdma_dev *dev, const struct rpcrdma_evch_attr *attr,
		      struct rpcrdma_evch **out);
int verbs_evch_destroy(struct rpcrdma_evch *ch);
int verbs_evch_get(struct rpcrdma_evch *ch, struct rpcrdma_event *ev);
int verbs_evch_get_fd(const struct rpcrdma_evch *ch);
/* Locked: queue @ev (copied). */
void verbs_evch_push(struct vevch *ch, const struct rpcrdma_event *ev);

/* cm.c */
int verbs_connect(struct rpcrdma_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		  const void *pdata, size_t len);
int verbs_listen(struct rpcrdma_dev *dev, struct rpcrdma_evch *evch, const struct sockaddr *addr,
		 socklen_t addrlen, int backlog, void *context, struct rpcrdma_listener **out);
int verbs_listener_destroy(struct rpcrdma_listener *l);
int verbs_listener_addr(const struct rpcrdma_listener *l, struct sockaddr_storage *addr);
int verbs_accept(struct rpcrdma_conn_req *req, struct rpcrdma_ep *ep, const void *pdata,
		 size_t len);
int verbs_reject(struct rpcrdma_conn_req *req, const void *pdata, size_t len);
int verbs_disconnect(struct rpcrdma_ep *ep);
/* Take every pending rdma_cm event and act on it; returns the events made. */
int verbs_cm_drain(struct vdev *d);
/* Locked: report DISCONNECTED for endpoints whose flushes are in (or
 * overdue); returns the events made. */
int verbs_cm_down_check(struct vdev *d);

/* qp.c */
int verbs_ep_create(struct rpcrdma_pd *pd, const struct rpcrdma_ep_attr *attr,
		    struct rpcrdma_ep **out);
int verbs_ep_destroy(struct rpcrdma_ep *ep);
int verbs_ep_query_stats(struct rpcrdma_ep *ep, struct rpcrdma_ep_stats *st);
int verbs_ep_query_conn(struct rpcrdma_ep *ep, struct rpcrdma_ep_conn_info *ci);
int verbs_post_recv(struct rpcrdma_ep *ep, uint64_t wr_id, const struct rpcrdma_sge *sg,
		    unsigned int num_sge);
int verbs_post_send(struct rpcrdma_ep *ep, const struct rpcrdma_send_wr *wr);
/* Locked: create @e's QP on its cm_id and post the receives held so far. */
int verbs_qp_create(struct vep *e);
/* Locked: the QP is connected: post the work held so far. */
void verbs_qp_start(struct vep *e);
/* Locked: the endpoint is down: complete held work as flushed; move the QP
 * to error so the hardware flushes what it holds. */
void verbs_qp_down(struct vep *e);
/* Locked: may @e's QP take a Bind now? Connected; or accepted on a device
 * that is not iWARP, where rdma_accept left the QP ready to send (its
 * Sends are still held until ESTABLISHED is read; a Bind posted now goes
 * ahead of them, as it must). A failed post still fails the Bind. */
static inline bool verbs_ep_can_bind(const struct vep *e)
{
	return e->qp && (e->state == VEP_CONNECTED ||
			 (e->state == VEP_CONNECTING && e->passive && !e->dev->iwarp));
}

/* Locked: post a Bind MW of @mw (new key @rkey) over [addr, addr + len)
 * of @mr, remote read (and write when @write) only, on @e's send queue,
 * ahead of what is posted after it. -ENOTCONN unless verbs_ep_can_bind. */
int verbs_post_bind(struct vep *e, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr,
		    uint64_t len, bool write, uint32_t rkey, uint32_t *seq);
/* Locked: until the Bind in send slot @seq of @e has executed (at most
 * 100 ms; not at all once @e is down): a window freed while its Bind is
 * still queued fails the Bind, and the QP goes to error with it. */
void verbs_bind_wait(struct vep *e, uint32_t seq);
/* Locked: the endpoint of QP number @qpn, or NULL. */
struct vep *verbs_ep_by_qpn(struct vdev *d, uint32_t qpn);
/* Locked: translate one hardware completion; false when it belongs to no
 * endpoint any more (dropped). */
bool verbs_wc_translate(struct vdev *d, const struct ibv_wc *in, struct rpcrdma_wc *out);
/* Locked: slots still owned by the hardware (receives taken from a shared
 * queue are not counted: a QP in error leaves the queue's own posted). */
uint32_t verbs_ep_outstanding(const struct vep *e);
/* @sg as the hardware's SGEs (the lkey where the device's differs). */
void verbs_to_ibv_sges(struct vdev *d, const struct rpcrdma_sge *sg, uint32_t n,
		       struct ibv_sge *out, uint32_t *total);
enum rpcrdma_wc_status verbs_map_status(enum ibv_wc_status s);

/* srq.c */
int verbs_srq_create(struct rpcrdma_pd *pd, const struct rpcrdma_srq_attr *attr,
		     struct rpcrdma_srq **out);
int verbs_srq_destroy(struct rpcrdma_srq *srq);
int verbs_post_srq_recv(struct rpcrdma_srq *srq, uint64_t wr_id, const struct rpcrdma_sge *sg,
			unsigned int num_sge);
int verbs_srq_resize(struct rpcrdma_srq *srq, uint32_t max_wr);
/* Locked: translate the completion of shared receive @in (SRQ_BIT) taken
 * by @e; @e NULL (a QP no longer known) posts it to its queue again.
 * false: nothing to report. */
bool verbs_srq_translate(struct vdev *d, struct vep *e, const struct ibv_wc *in,
			 struct rpcrdma_wc *out);

#endif
