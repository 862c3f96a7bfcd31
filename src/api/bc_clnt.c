// SPDX-License-Identifier: MIT
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), the client's half of the API
 * (include/rpcrdma/backchannel.h): a client with a backchannel, its
 * callback programs, BC_ENABLE, statistics and the reverse request
 * accessors. The reverse responder itself is transport/bc_responder.c.
 */
#include <errno.h>

#include "rpcrdma/tirpc.h"
#include "transport/bc_responder.h"

int rpcrdma_clnt_create_bc(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
			   const struct rpcrdma_clnt_opts *opts, const struct rpcrdma_bc_opts *bc,
			   struct rpcrdma_clnt **out)
{
	static const struct rpcrdma_bc_opts defaults;

	return clnt_create_ex(host, port, prog, vers, opts, bc ? bc : &defaults, out);
}

int rpcrdma_clnt_bc_register(struct rpcrdma_clnt *c, uint32_t prog, uint32_t vers,
			     rpcrdma_bc_dispatch_t fn, void *ctx)
{
	struct bc_clnt *b = c ? clnt_bc(c) : NULL;
	int rc = 0;

	if (!b || !fn)
		return -EINVAL;
	futex_mutex_lock(b->lock);
	for (uint32_t i = 0; i < b->nprogs; i++)
		if (b->progs[i].prog == prog && b->progs[i].vers == vers)
			rc = -EEXIST;
	if (!rc && b->nprogs >= BC_MAX_PROGS)
		rc = -ENOSPC;
	if (!rc)
		b->progs[b->nprogs++] = (struct bc_prog){prog, vers, fn, ctx};
	futex_mutex_unlock(b->lock);
	return rc;
}

int rpcrdma_clnt_bc_enable(struct rpcrdma_clnt *c)
{
	struct bc_clnt *b = c ? clnt_bc(c) : NULL;
	struct bc_enable_args a;
	int rc;

	if (!b)
		return -EINVAL;
	futex_mutex_lock(b->lock);
	/* From now on every new connection is enabled again by itself. */
	b->enabled = true;
	a.id = b->id;
	a.credits = b->credits;
	a.flags = b->chunks ? BC_F_CHUNKS : 0;
	futex_mutex_unlock(b->lock);
	rc = clnt_call_prog(c, RPCRDMA_BC_PROG, RPCRDMA_BC_VERS, RPCRDMA_BC_PROC_ENABLE,
			    (xdrproc_t)xdr_bc_enable_args, &a, NULL, NULL, NULL);
	futex_mutex_lock(b->lock);
	b->st.enables++;
	if (rc)
		b->enabled = false;
	else if (b->up)
		b->st.enabled = 1;
	futex_mutex_unlock(b->lock);
	return rc;
}

int rpcrdma_clnt_bc_stats(struct rpcrdma_clnt *c, struct rpcrdma_bc_stats *st)
{
	struct bc_clnt *b = c ? clnt_bc(c) : NULL;

	if (!b || !st)
		return -EINVAL;
	futex_mutex_lock(b->lock);
	*st = b->st;
	futex_mutex_unlock(b->lock);
	return 0;
}

uint32_t rpcrdma_bc_req_xid(const struct rpcrdma_bc_req *r)
{
	return r->call.xid;
}

uint32_t rpcrdma_bc_req_prog(const struct rpcrdma_bc_req *r)
{
	return r->call.prog;
}

uint32_t rpcrdma_bc_req_vers(const struct rpcrdma_bc_req *r)
{
	return r->call.vers;
}

uint32_t rpcrdma_bc_req_proc(const struct rpcrdma_bc_req *r)
{
	return r->call.proc;
}

int rpcrdma_bc_getargs(struct rpcrdma_bc_req *r, xdrproc_t xargs, void *args)
{
	if (!xargs)
		return 0;
	return (*xargs)(&r->xdrs, args) ? 0 : -EBADMSG;
}

int rpcrdma_bc_reply(struct rpcrdma_bc_req *r, xdrproc_t xres, void *res)
{
	struct rpcrdma_rpc_reply rep;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, RPCRDMA_RPC_SUCCESS);
	return bc_clnt_answer(r, &rep, xres, res);
}

int rpcrdma_bc_error(struct rpcrdma_bc_req *r, uint32_t accept_stat)
{
	struct rpcrdma_rpc_reply rep;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, xprt_error_accept_stat(accept_stat));
	return bc_clnt_answer(r, &rep, NULL, NULL);
}
