/* SPDX-License-Identifier: MIT */
/*
 * The client's reverse responder of RFC 8167 (bc_responder.c): the
 * callback programs a client serves on the connection requester.c owns. Its
 * public handles (struct rpcrdma_bc_req, include/rpcrdma/backchannel.h)
 * are used by the API layer (src/api/bc_clnt.c); transport/
 * backchannel_hooks.h has the calls requester.c makes into it. Hidden
 * symbols.
 */
#ifndef RPCRDMA_TRANSPORT_BC_RESPONDER_H
#define RPCRDMA_TRANSPORT_BC_RESPONDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/backchannel.h"
#include "transport/backchannel.h"
#include "transport/backchannel_hooks.h"
#include "transport/evloop.h"
#include "util/futex_cond.h"

enum bc_req_state { RQ_FREE = 0, RQ_READING, RQ_READY, RQ_DISPATCHED, RQ_SENDING };

struct bc_prog {
	uint32_t prog, vers;
	rpcrdma_bc_dispatch_t fn;
	void *ctx;
};

struct rpcrdma_bc_req {
	struct bc_clnt *b;
	uint32_t idx;
	enum bc_req_state state;
	uint32_t gen; /* connection the call came on */
	uint8_t *buf; /* copy of the received message (inline_recv bytes) */
	size_t len;
	struct rpcrdma1_hdr h;
	/* Read chunks, pulled into rd: Position-Zero first, then in order */
	uint32_t p0len;
	struct xprt_rchunk rc[RPCRDMA_MAX_BULK];
	uint32_t nrc;
	struct xprt_lbuf rd;
	struct rpcrdma_mr *rdmr;
	uint32_t reads_pending;
	bool read_err;
	/* the call */
	struct rpcrdma_rpc_call call;
	struct rpcrdma_xdr cur;
	XDR xdrs;
	/* the reply: send buffer idx of the pool; Long Reply source */
	struct xprt_lbuf lrep;
	struct rpcrdma_mr *lmr;
	/* Reply chunk Writes posted and not known complete (unsignaled: the
	 * reply's Send completion says they are); lmr stays until then */
	bool writes_out;
	struct rpcrdma_bc_req *next;
};

struct bc_clnt {
	struct rpcrdma_clnt *c;
	struct futex_mutex *lock; /* the client's */
	struct rpcrdma_pd *pd;
	uint32_t credits; /* reverse credits we grant */
	bool chunks;
	uint64_t id;
	struct rpcrdma_bc_req *reqs;
	uint32_t nreq;
	uint32_t inline_recv_cap; /* size of a request's copy buffer */
	struct xprt_pool sendp;   /* one buffer per request */
	/* connection (lock held) */
	struct rpcrdma_ep *ep;
	struct xprt_limits lim;
	uint32_t gen;
	bool up;
	bool enabled;          /* the upper layer opened the gate */
	bool reenable_pending; /* a reconnect: send BC_ENABLE again */
	struct bc_prog progs[BC_MAX_PROGS];
	uint32_t nprogs;
	struct rpcrdma_bc_req *qhead, *qtail; /* ready to dispatch */
	/* RPCRDMA_BC_OPT_INLINE: ready calls wait here for the thread that
	 * drives the device (bc_clnt_run_inline) instead. */
	bool inline_dispatch;
	struct rpcrdma_bc_req *ihead, *itail;
	/* The dispatch thread runs dloop; a thread of its own runs eloop and
	 * sends BC_ENABLE again after a reconnect, so a callback that blocks
	 * on the dispatch thread cannot hold it up. Both are loops without a
	 * device (evloop.h), woken on cv. */
	struct evloop dloop, eloop;
	pthread_t thr;
	pthread_t ethr;
	bool thr_started, ethr_started, stop;
	struct futex_cond cv;
	struct rpcrdma_bc_stats st;
	struct rpcrdma1_hdr scratch;
};

/* Answer @r with @rep (+ @xres/@res): inline, or a Long Reply into the
 * server's Reply chunk (RFC 8166 §3.5.3.2); ERR_CHUNK when it fits
 * nowhere. No lock held. 0 or -errno. */
int bc_clnt_answer(struct rpcrdma_bc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		   void *res);

#endif
