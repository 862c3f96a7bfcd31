/* SPDX-License-Identifier: MIT */
/*
 * Hooks between the forward requester / the responder (requester.c,
 * svc_conn.c) and the backchannel engines (bc_responder.c, bc_requester.c;
 * RFC 8167). Hidden symbols.
 *
 * Locking: the backchannel state of a client or server is protected by
 * that client's or server's own lock (one lock per endpoint, so the
 * receive path never takes two). Functions marked "lock held" are called
 * with it held; the others take it themselves.
 *
 * Work requests the backchannel posts on a connection carry BC_WR_KIND in
 * bits 24..31 of wr_id (the client also puts its connection generation in
 * bits 32..63, as requester.c does); requester.c hands their completions
 * to bc_clnt_wc(), svc_conn.c ignores them (the server's reverse calls need no
 * completion: a slot is reused only after its reply or its connection's
 * loss).
 */
#ifndef RPCRDMA_TRANSPORT_BACKCHANNEL_HOOKS_H
#define RPCRDMA_TRANSPORT_BACKCHANNEL_HOOKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/futex_cond.h"
#include "rpcrdma/backchannel.h"
#include "transport/xprt.h"

#define BC_WR_KIND 0x42u

/* ---- shared by bc_clnt.c and bc_svc.c ---- */

#define BC_DEFAULT_CREDITS 2u
#define BC_MAX_PROGS       16u
#define BC_MAX_CHUNK       (64ull << 20)

/* wr_id layout of backchannel work requests: gen<<32 | KIND<<24 | op<<16 | idx */
enum { BC_OP_SEND = 1, BC_OP_READ, BC_OP_WRITE };

static inline uint64_t bc_wrid(uint32_t gen, uint32_t op, uint32_t idx)
{
	return ((uint64_t)gen << 32) | ((uint64_t)BC_WR_KIND << 24) | ((uint64_t)op << 16) | idx;
}

/* BC_ENABLE arguments (RPCRDMA_BC_PROG v1 proc 1). */
struct bc_enable_args {
	uint64_t id;      /* the client, the same across reconnects */
	uint32_t credits; /* its reverse credits */
	uint32_t flags;   /* BC_F_CHUNKS: it accepts reverse chunks */
};
#define BC_F_CHUNKS 1u

static inline bool_t xdr_bc_enable_args(XDR *x, struct bc_enable_args *a)
{
	return xdr_uint64_t(x, &a->id) && xdr_u_int(x, &a->credits) && xdr_u_int(x, &a->flags);
}

static inline bool opt_inline(const struct rpcrdma_bc_opts *o)
{
	return o && (o->comp_mask & RPCRDMA_BC_OPT_INLINE) && o->inline_dispatch;
}

static inline int opts_resolve(const struct rpcrdma_bc_opts *o, uint32_t *credits, bool *chunks,
			       uint32_t *timeout_ms, uint32_t *conn_wait_ms)
{
	uint32_t m = o ? o->comp_mask : 0;

	if (m &
	    ~(uint32_t)(RPCRDMA_BC_OPT_CREDITS | RPCRDMA_BC_OPT_CHUNKS | RPCRDMA_BC_OPT_TIMEOUT |
			RPCRDMA_BC_OPT_CONN_WAIT | RPCRDMA_BC_OPT_INLINE))
		return -EINVAL;

	*credits = BC_DEFAULT_CREDITS;
	*chunks = true;
	*timeout_ms = 30000;
	*conn_wait_ms = 10000;
	if (m & RPCRDMA_BC_OPT_CREDITS) {
		if (o->credits < 1 || o->credits > RPCRDMA_BC_MAX_CREDITS)
			return -EINVAL;
		*credits = o->credits;
	}
	if (m & RPCRDMA_BC_OPT_CHUNKS)
		*chunks = o->chunks != 0;
	if (m & RPCRDMA_BC_OPT_TIMEOUT)
		*timeout_ms = o->timeout_ms;
	if (m & RPCRDMA_BC_OPT_CONN_WAIT)
		*conn_wait_ms = o->conn_wait_ms;
	return 0;
}

/* ---- client side ---- */

struct bc_clnt;

/* Receives and send work requests to add for @opts (NULL: defaults). */
uint32_t bc_clnt_extra_recvs(const struct rpcrdma_bc_opts *opts);
uint32_t bc_clnt_extra_wrs(const struct rpcrdma_bc_opts *opts);
/* Validate @opts and set up the backchannel of client @c (before its first
 * connection); @lock is the client's lock, @pd its PD, @inline_send its
 * send buffer size. */
int bc_clnt_new(struct rpcrdma_clnt *c, struct futex_mutex *lock, struct rpcrdma_pd *pd,
		uint32_t inline_send, const struct rpcrdma_bc_opts *opts, struct bc_clnt **out);
/* Stop its thread and free it (the progress thread is stopped). */
void bc_clnt_free(struct bc_clnt *b);
/* Lock held. A connection is up (@reconnect: not the first) / lost. */
void bc_clnt_up(struct bc_clnt *b, struct rpcrdma_ep *ep, const struct xprt_limits *lim,
		uint32_t gen, bool reconnect);
void bc_clnt_down(struct bc_clnt *b);
/* Lock held. The connection's limits changed (Version Two answered without
 * private data, the server's transport properties, clnt_vers.c): reverse
 * replies go in @lim's version and inline thresholds from now on. */
void bc_clnt_lim(struct bc_clnt *b, const struct xprt_limits *lim);
/* Lock held. A received message: returns true when it is a reverse Call
 * (RFC 8167 §4.1) and the backchannel took it (the caller re-posts the
 * receive buffer, nothing else); false: forward traffic, carry on. */
bool bc_clnt_recv(struct bc_clnt *b, const uint8_t *buf, size_t len);
/* Lock held. A completion of a BC_WR_KIND work request. */
void bc_clnt_wc(struct bc_clnt *b, const struct rpcrdma_wc *wc);

/* Lock held: true when reverse calls wait for bc_clnt_run_inline(). */
bool bc_clnt_inline_pending(const struct bc_clnt *b);
/* No lock held (RPCRDMA_BC_OPT_INLINE): dispatch the reverse calls that
 * arrived, on the calling thread (the one that drives the device). */
void bc_clnt_run_inline(struct bc_clnt *b);

/* requester.c: a forward call to another program on the client's
 * connection (BC_ENABLE). As rpcrdma_clnt_call(). */
int clnt_call_prog(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers, uint32_t proc,
		   xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
		   const struct rpcrdma_call_opts *opts);
/* api/client.c: the client's backchannel, or NULL. */
struct bc_clnt *clnt_bc(struct rpcrdma_clnt *c);
/* api/client.c: rpcrdma_clnt_create() with a backchannel set up from @bc
 * (NULL: none, exactly rpcrdma_clnt_create()). */
int clnt_create_ex(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
		   const struct rpcrdma_clnt_opts *opts, const struct rpcrdma_bc_opts *bc,
		   struct rpcrdma_clnt **out);

/* ---- server side ---- */

struct bc_svc;
struct bc_conn;

/* Receives to add per connection. */
uint32_t bc_svc_extra_recvs(const struct bc_svc *b);
/* Lock held. A connection was accepted (@ep, limits @lim) / lost / is
 * being freed. */
struct bc_conn *bc_svc_conn_new(struct bc_svc *b, struct rpcrdma_ep *ep,
				const struct xprt_limits *lim);
/* Lock held: the client of @bc spoke Version Two, or its transport
 * properties came (svc_vers.c): reverse calls go in Version Two with
 * @lim's inline thresholds (the connection's) from now on. */
void bc_svc_conn_v2(struct bc_conn *bc, const struct xprt_limits *lim);
void bc_svc_conn_down(struct bc_conn *bc);
void bc_svc_conn_free(struct bc_conn *bc);
/* Lock held. A received message: true when it is a reverse Reply or an
 * RDMA_ERROR answering a reverse call (RFC 8167 §4.1): handled, the caller
 * re-posts the receive buffer; false: a forward call, carry on. */
bool bc_svc_recv(struct bc_conn *bc, const uint8_t *buf, size_t len);
/* No lock held (RPCRDMA_BC_OPT_INLINE): run the completion callbacks of
 * finished asynchronous reverse calls on the calling thread (the server's
 * progress thread). Cheap when there are none. */
void bc_svc_run_inline(struct bc_svc *b);
/* Stop its thread and fail every reverse call with -ECANCELED (no lock
 * held; before the server's threads stop), then free it (after). */
void bc_svc_stop(struct bc_svc *b);
void bc_svc_free(struct bc_svc *b);

/* What the backchannel needs of a server (filled in by svc_conn.c). */
struct svc_bc_host {
	struct futex_mutex *lock;
	struct rpcrdma_pd *pd;
	uint32_t inline_send;
	bool started;
};
void svc_bc_host(struct rpcrdma_svc *s, struct svc_bc_host *h);
/* Attach @b (before rpcrdma_svc_start; -EBUSY after, -EEXIST twice). */
int svc_bc_attach(struct rpcrdma_svc *s, struct bc_svc *b);
/* The backchannel of the connection @r came on, or NULL. */
struct bc_conn *svc_req_bc(struct rpcrdma_svc_req *r);
/* The server's backchannel, or NULL (lock held). */
struct bc_svc *svc_bc_get(struct rpcrdma_svc *s);

/* Tests: the next reverse XIDs of @cl start at @xid, to have the same XID
 * live in both directions on purpose (RFC 8167 §2.4.1). */
void bc_test_set_next_xid(struct rpcrdma_svc_client *cl, uint32_t xid);

#endif
