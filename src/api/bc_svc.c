// SPDX-License-Identifier: MIT
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), the server's half: the public
 * functions of include/rpcrdma/backchannel.h that call clients back, and
 * the BC_ENABLE program every backchannel server serves. The reverse
 * requester itself is transport/bc_requester.c; bc_clnt.c is the
 * client's half.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/tirpc.h"
#include "transport/bc_requester.h"

/* The BC_ENABLE program, served by the library on every backchannel
 * server (the gate's carrier, see backchannel.h). */
static void enable_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct bc_svc *b = ctx;
	struct bc_enable_args a;
	struct bc_conn *bc;
	int rc;

	(void)args;
	if (proc == RPCRDMA_BC_PROC_NULL) {
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	}
	if (proc != RPCRDMA_BC_PROC_ENABLE) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_bc_enable_args, &a)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	futex_mutex_lock(b->lock);
	bc = svc_req_bc(req);
	rc = bc ? bc_svc_cl_enable(bc, true, a.id, a.credits) : -ENOTCONN;
	futex_mutex_unlock(b->lock);
	if (rc)
		rpcrdma_svc_error(req, RPCRDMA_RPC_SYSTEM_ERR);
	else
		rpcrdma_svc_reply(req, NULL, NULL);
}

/* ---- public: server ---- */

int rpcrdma_svc_bc_init(struct rpcrdma_svc *svc, const struct rpcrdma_bc_opts *opts,
			rpcrdma_bc_event_t cb, void *ctx)
{
	struct svc_bc_host h;
	struct bc_svc *b;
	int rc;

	if (!svc)
		return -EINVAL;
	svc_bc_host(svc, &h);
	if (h.started)
		return -EBUSY;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	rc = opts_resolve(opts, &b->slots, &b->chunks, &b->timeout_ms, &b->conn_wait_ms);
	if (rc) {
		free(b);
		return rc;
	}
	b->lock = h.lock;
	b->pd = h.pd;
	b->inline_send = h.inline_send;
	b->inline_cb = opt_inline(opts);
	b->cb = cb;
	b->ctx = ctx;
	futex_cond_init(&b->cv);
	rc = rpcrdma_svc_register(svc, RPCRDMA_BC_PROG, RPCRDMA_BC_VERS, enable_dispatch, b);
	if (!rc)
		rc = svc_bc_attach(svc, b);
	if (!rc) {
		rc = bc_svc_start(b);
	}
	if (rc) {
		/* The program registration cannot be undone; a second
		 * attempt then fails with -EEXIST. */
		free(b);
	}
	return rc;
}

struct rpcrdma_svc_client *rpcrdma_svc_req_client(struct rpcrdma_svc_req *req)
{
	struct bc_conn *bc = req ? svc_req_bc(req) : NULL;
	struct rpcrdma_svc_client *cl;

	if (!bc)
		return NULL;
	futex_mutex_lock(bc->b->lock);
	cl = bc->cl;
	futex_mutex_unlock(bc->b->lock);
	return cl;
}

int rpcrdma_svc_client_enable(struct rpcrdma_svc_client *cl, uint32_t credits)
{
	int rc;

	if (!cl)
		return -EINVAL;
	futex_mutex_lock(cl->b->lock);
	rc = cl->conn ? bc_svc_cl_enable(cl->conn, cl->has_id, cl->id, credits) : -ENOTCONN;
	futex_mutex_unlock(cl->b->lock);
	return rc;
}

int rpcrdma_svc_client_enable_id(struct rpcrdma_svc_client *cl, uint64_t id, uint32_t credits,
				 struct rpcrdma_svc_client **out)
{
	struct bc_conn *bc;
	int rc;

	if (!cl)
		return -EINVAL;
	futex_mutex_lock(cl->b->lock);
	bc = cl->conn;
	rc = bc ? bc_svc_cl_enable(bc, true, id, credits) : -ENOTCONN;
	/* the handle now bound to the connection: @cl or the one of @id */
	if (rc == 0 && out)
		*out = bc->cl;
	futex_mutex_unlock(cl->b->lock);
	return rc;
}

int rpcrdma_svc_client_call(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers,
			    uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res,
			    const struct rpcrdma_call_opts *opts)
{
	return bc_svc_client_call(cl, prog, vers, proc, xargs, args, xres, res, opts, false, NULL,
				  NULL);
}

int rpcrdma_svc_client_call_async(struct rpcrdma_svc_client *cl, uint32_t prog, uint32_t vers,
				  uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres,
				  void *res, const struct rpcrdma_call_opts *opts,
				  rpcrdma_svc_client_cb_t cb, void *cb_arg)
{
	return bc_svc_client_call(cl, prog, vers, proc, xargs, args, xres, res, opts, true, cb,
				  cb_arg);
}

int rpcrdma_svc_client_stats(struct rpcrdma_svc_client *cl, struct rpcrdma_bc_stats *st)
{
	if (!cl || !st)
		return -EINVAL;
	futex_mutex_lock(cl->b->lock);
	bc_svc_client_stats(cl, st);
	futex_mutex_unlock(cl->b->lock);
	return 0;
}

int rpcrdma_svc_bc_stats(struct rpcrdma_svc *svc, struct rpcrdma_bc_stats *st)
{
	struct svc_bc_host h;
	struct bc_svc *b;

	if (!svc || !st)
		return -EINVAL;
	svc_bc_host(svc, &h);
	memset(st, 0, sizeof(*st));
	futex_mutex_lock(h.lock);
	b = svc_bc_get(svc);
	for (struct rpcrdma_svc_client *cl = b ? b->clients : NULL; cl; cl = cl->next) {
		struct rpcrdma_bc_stats one;

		bc_svc_client_stats(cl, &one);
#define SUM(f) st->f += one.f
		SUM(calls);
		SUM(calls_sent);
		SUM(replies);
		SUM(retransmits);
		SUM(credit_stalls);
		SUM(timeouts);
		SUM(gate_refusals);
		SUM(err_chunk_rx);
		SUM(unmatched);
		SUM(enables);
		SUM(short_msgs);
		SUM(long_calls);
		SUM(long_replies);
		SUM(read_chunks);
		SUM(read_bytes);
		SUM(reply_chunks);
		SUM(reply_bytes);
		SUM(inline_bytes_tx);
		SUM(inline_bytes_rx);
		SUM(credits_ignored);
		SUM(outstanding);
		SUM(enabled);
		SUM(connected);
#undef SUM
		if (one.max_outstanding > st->max_outstanding)
			st->max_outstanding = one.max_outstanding;
	}
	futex_mutex_unlock(h.lock);
	return b ? 0 : -EINVAL;
}
