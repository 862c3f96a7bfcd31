// SPDX-License-Identifier: MIT
/*
 * The RPC-over-RDMA client (include/rpcrdma/client.h): option parsing and
 * the public functions, over the forward requester of src/transport
 * (requester.h says which file holds what: slots and XIDs, credits,
 * deadlines, reconnect, the progress loop).
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "transport/backchannel_hooks.h"
#include "transport/ccp.h"
#include "transport/requester.h"

static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {0}, *res = NULL;
	char ps[8];
	int rc;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host && *host ? host : "127.0.0.1", ps, &hints, &res);
	if (rc || !res)
		return -ENOENT;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int apply_opts(struct rpcrdma_clnt *c, const struct rpcrdma_clnt_opts *o)
{
	uint32_t m = o ? o->comp_mask : 0;

	c->nslots = RPCRDMA_DEFAULT_CREDITS;
	c->inline_send = c->inline_recv = RPCRDMA_ADVERTISED_INLINE;
	c->timeout_ms = 30000;
	c->connect_timeout_ms = 10000;
	c->retries = 3;
	c->ddp_threshold = 1024;
	c->cpu = -1;
	c->progress = RPCRDMA_PROGRESS_THREAD;
	c->remote_inv = true;
	c->mpa_crc = true;
	c->pdata = !(m & RPCRDMA_CLNT_OPT_PRIVATE_DATA) || o->private_data;
	if (m & RPCRDMA_CLNT_OPT_CREDITS) {
		if (o->credits < 1 || o->credits > 1024)
			return -EINVAL;
		c->nslots = o->credits;
	}
	c->vpolicy = RPCRDMA_VERSION_1;
	c->v2_props = true;
	if (m & RPCRDMA_CLNT_OPT_RDMA_VERSION) {
		if (o->rdma_version != RPCRDMA_VERSION_1 &&
		    o->rdma_version != RPCRDMA_VERSION_AUTO && o->rdma_version != RPCRDMA_VERSION_2)
			return -EINVAL;
		c->vpolicy = o->rdma_version;
		c->v2_props = o->rdma_props != 0;
		/* Draft §2.3: a Version Two receiver takes 4096-byte messages. */
		if (c->vpolicy != RPCRDMA_VERSION_1)
			c->inline_send = c->inline_recv = RPCRDMA2_DEFAULT_INLINE;
	}
	if (m & RPCRDMA_CLNT_OPT_INLINE) {
		if (!xprt_inline_valid(o->inline_send) || !xprt_inline_valid(o->inline_recv))
			return -EINVAL;
		c->inline_send = o->inline_send;
		c->inline_recv = o->inline_recv;
	}
	if (m & RPCRDMA_CLNT_OPT_TIMEOUT)
		c->timeout_ms = o->timeout_ms;
	if (m & RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT)
		c->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : 10000;
	if (m & RPCRDMA_CLNT_OPT_RETRIES)
		c->retries = o->retries;
	if (m & RPCRDMA_CLNT_OPT_DDP_THRESHOLD)
		c->ddp_threshold = o->ddp_threshold ? o->ddp_threshold : 1;
	if (m & RPCRDMA_CLNT_OPT_CPU)
		c->cpu = o->cpu;
	if (m & RPCRDMA_CLNT_OPT_PROGRESS)
		c->progress = o->progress;
	if (m & RPCRDMA_CLNT_OPT_REMOTE_INV)
		c->remote_inv = o->remote_invalidate != 0;
	if (m & RPCRDMA_CLNT_OPT_MPA_CRC)
		c->mpa_crc = o->mpa_crc != 0;
	if (m & RPCRDMA_CLNT_OPT_RELIABLE_REPLY)
		c->rr_opt = o->reliable_reply != 0;
	c->ccp = (m & RPCRDMA_CLNT_OPT_CCP) && o->ccp;
	c->ccp_info.status = -ENODATA;
	c->tirpc_reply =
	    (m & RPCRDMA_CLNT_OPT_TIRPC_REPLY) ? o->tirpc_reply_size : RPCRDMA_TIRPC_REPLY_SIZE;
	if ((m & RPCRDMA_CLNT_OPT_AUTH) && o->auth_flavor != RPCRDMA_RPC_AUTH_NONE) {
		int rc = rpcrdma_rpc_encode_cred_verf(c->auth, sizeof(c->auth), o->auth_flavor,
						      o->auth_sys, &c->auth_len);
		if (rc)
			return rc == -E2BIG ? -EINVAL : rc;
	}
	return 0;
}

int rpcrdma_clnt_create(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
			const struct rpcrdma_clnt_opts *opts, struct rpcrdma_clnt **out)
{
	return clnt_create_ex(host, port, prog, vers, opts, NULL, out);
}

int clnt_create_ex(const char *host, uint16_t port, uint32_t prog, uint32_t vers,
		   const struct rpcrdma_clnt_opts *opts, const struct rpcrdma_bc_opts *bc,
		   struct rpcrdma_clnt **out)
{
	struct rpcrdma_clnt *c = calloc(1, sizeof(*c));
	int rc;

	if (!c || !out) {
		free(c);
		return c ? -EINVAL : -ENOMEM;
	}
	futex_mutex_init(&c->lock);
	futex_cond_init(&c->slot_cv);
	futex_cond_init(&c->bg_cv);
	rc = apply_opts(c, opts);
	if (!rc)
		rc = resolve(host, port ? port : RPCRDMA_DEFAULT_PORT, &c->addr, &c->alen);
	if (rc) {
		clnt_free(c);
		return rc;
	}
	c->prog = prog;
	c->vers = vers;
	rc = clnt_setup(
	    c, (opts && (opts->comp_mask & RPCRDMA_CLNT_OPT_PROVIDER)) ? opts->provider : NULL, bc);
	if (rc)
		return rc; /* c is freed */
	if (c->ccp)
		clnt_ccp_query(c); /* transport/ccp_clnt.c */
	*out = c;
	return 0;
}

void rpcrdma_clnt_destroy(struct rpcrdma_clnt *c)
{
	if (!c)
		return;
	clnt_shutdown(c);
	clnt_free(c);
}

int rpcrdma_clnt_call(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
		      xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts)
{
	return clnt_call_own(c, proc, xargs, args, xres, res, opts);
}

int rpcrdma_clnt_call_async(struct rpcrdma_clnt *c, uint32_t proc, xdrproc_t xargs, void *args,
			    xdrproc_t xres, void *res, const struct rpcrdma_call_opts *opts,
			    rpcrdma_clnt_cb_t cb, void *cb_arg)
{
	return clnt_call_async(c, proc, xargs, args, xres, res, opts, cb, cb_arg);
}

int rpcrdma_clnt_stats(struct rpcrdma_clnt *c, struct rpcrdma_xprt_stats *st)
{
	if (!c || !st)
		return -EINVAL;
	futex_mutex_lock(&c->lock);
	*st = c->st;
	futex_mutex_unlock(&c->lock);
	return 0;
}

int rpcrdma_clnt_ccp(struct rpcrdma_clnt *c, struct rpcrdma_ccp_info *out)
{
	if (!c || !out)
		return -EINVAL;
	futex_mutex_lock(&c->lock);
	*out = c->ccp_info;
	futex_mutex_unlock(&c->lock);
	return 0;
}

#ifdef RPCRDMA_TEST_HOOKS
void rpcrdma_clnt_set_testhook(struct rpcrdma_clnt *c, const struct clnt_testhook *h)
{
	futex_mutex_lock(&c->lock);
	c->hook = *h;
	futex_mutex_unlock(&c->lock);
}

int rpcrdma_clnt_test_disconnect(struct rpcrdma_clnt *c)
{
	int rc = -ENOTCONN;

	futex_mutex_lock(&c->lock);
	if (c->ep && c->state == C_UP)
		rc = rpcrdma_disconnect(c->ep);
	futex_mutex_unlock(&c->lock);
	return rc;
}
#endif

uint32_t clnt_tirpc_reply_size(const struct rpcrdma_clnt *c)
{
	return c->tirpc_reply;
}

/* ---- the backchannel's view of a client (transport/backchannel_hooks.h) ---- */

struct bc_clnt *clnt_bc(struct rpcrdma_clnt *c)
{
	return c->bc;
}
