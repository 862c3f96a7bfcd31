// SPDX-License-Identifier: MIT
/*
 * The RPC-over-RDMA server API (include/rpcrdma/server.h): options,
 * program registration, life cycle, statistics and the request
 * accessors, over the responder in src/transport (transport/responder.h
 * lists its files: connections, Read-chunk pull, splice, reply
 * marshalling, the progress loop).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/rpcbind_int.h"
#include "transport/backchannel_hooks.h"
#include "transport/responder.h"

static int apply_opts(struct rpcrdma_svc *s, const struct rpcrdma_svc_opts *o)
{
	uint32_t m = o ? o->comp_mask : 0;

	s->credits = RPCRDMA_DEFAULT_CREDITS;
	s->inline_send = s->inline_recv = RPCRDMA_ADVERTISED_INLINE;
	s->workers = 0; /* dispatch inline on the progress thread */
	s->cpu = -1;
	s->progress = RPCRDMA_PROGRESS_THREAD;
	s->remote_inv = true;
	s->max_chunk = 64u << 20;
	s->max_wchunks = RPCRDMA_MAX_WRITE_CHUNKS;
	s->max_pull = 16u << 20;
	s->pull_timeout_ns = 10000ull * 1000000ull;
	s->max_conns = 1024;
	s->mpa_crc = true;
	s->pdata = !(m & RPCRDMA_SVC_OPT_PRIVATE_DATA) || o->private_data;
	s->backlog = 128;
	s->ccp = !(m & RPCRDMA_SVC_OPT_CCP) || o->ccp; /* transport/ccp_svc.c */
	if (m & RPCRDMA_SVC_OPT_CREDITS) {
		/* RFC 8166 §3.3.1: never grant zero. */
		if (o->credits < 1 || o->credits > 1024)
			return -EINVAL;
		s->credits = o->credits;
	}
	s->srq_depth = 16 * s->credits;
	if (m & RPCRDMA_SVC_OPT_SRQ) {
		if (o->srq_depth > (1u << 20))
			return -EINVAL;
		s->srq_depth = o->srq_depth;
	}
	s->v2 = false;
	s->v2_props = true;
	if (m & RPCRDMA_SVC_OPT_RDMA_VERSION) {
		if (o->rdma_version != RPCRDMA_VERSION_1 && o->rdma_version != RPCRDMA_VERSION_2)
			return -EINVAL;
		s->v2 = o->rdma_version == RPCRDMA_VERSION_2;
		s->v2_props = o->rdma_props != 0;
		/* Draft §2.3: a Version Two receiver takes 4096-byte messages. */
		if (s->v2)
			s->inline_send = s->inline_recv = RPCRDMA2_DEFAULT_INLINE;
	}
	if (m & RPCRDMA_SVC_OPT_INLINE) {
		if (!xprt_inline_valid(o->inline_send) || !xprt_inline_valid(o->inline_recv))
			return -EINVAL;
		s->inline_send = o->inline_send;
		s->inline_recv = o->inline_recv;
	}
	if (m & RPCRDMA_SVC_OPT_WORKERS) {
		if (o->workers > 256)
			return -EINVAL;
		s->workers = o->workers;
	}
	if (m & RPCRDMA_SVC_OPT_CPU)
		s->cpu = o->cpu;
	if (m & RPCRDMA_SVC_OPT_PROGRESS)
		s->progress = o->progress;
	if (m & RPCRDMA_SVC_OPT_REMOTE_INV)
		s->remote_inv = o->remote_invalidate != 0;
	if (m & RPCRDMA_SVC_OPT_MAX_PULL)
		s->max_pull = o->max_pull_bytes ? o->max_pull_bytes : 1;
	if (m & RPCRDMA_SVC_OPT_PULL_TIMEOUT)
		s->pull_timeout_ns = (uint64_t)o->pull_timeout_ms * 1000000ull;
	if (m & RPCRDMA_SVC_OPT_MAX_CHUNK)
		s->max_chunk = o->max_chunk_bytes;
	if (m & RPCRDMA_SVC_OPT_MAX_CONNS)
		s->max_conns = o->max_conns ? o->max_conns : 1;
	if (m & RPCRDMA_SVC_OPT_MPA_CRC)
		s->mpa_crc = o->mpa_crc != 0;
	if (m & RPCRDMA_SVC_OPT_RPCBIND)
		s->rpcbind = o->rpcbind != 0;
	if (m & RPCRDMA_SVC_OPT_BACKLOG)
		s->backlog = o->backlog > 0 ? o->backlog : 128;
	s->rr_timeout_ms = 10000;
	s->rr_max_conn = 128u << 20;
	s->rr_max = 512u << 20;
	if (m & RPCRDMA_SVC_OPT_RELIABLE_REPLY) {
		s->rr = o->reliable_reply != 0;
		if (o->exposed_timeout_ms)
			s->rr_timeout_ms = o->exposed_timeout_ms;
		if (o->max_exposed_conn_bytes)
			s->rr_max_conn = o->max_exposed_conn_bytes;
		if (o->max_exposed_bytes)
			s->rr_max = o->max_exposed_bytes;
	}
	if (m & RPCRDMA_SVC_OPT_MAX_WRITE_CHUNKS) {
		if (o->max_write_chunks < 1 || o->max_write_chunks > RPCRDMA_MAX_WRITE_CHUNKS)
			return -EINVAL;
		s->max_wchunks = o->max_write_chunks;
	}
	if ((m & RPCRDMA_SVC_OPT_DRC) && o->drc)
		return svc_drc_new(o->drc_max_entries, o->drc_max_bytes, &s->drc);
	return 0;
}

static int svc_new(const char *host, uint16_t port, const struct rpcrdma_svc_opts *opts,
		   struct rpcrdma_svc **out)
{
	struct rpcrdma_svc *s;
	int rc;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	futex_mutex_init(&s->lock);
	futex_cond_init(&s->work_cv);
	futex_cond_init(&s->done_cv);
	s->tirpc_run = svc_tirpc_dispatch;
	rc = apply_opts(s, opts);
	if (!rc)
		rc = svc_listen(
		    s, host, port,
		    (opts && (opts->comp_mask & RPCRDMA_SVC_OPT_PROVIDER)) ? opts->provider : NULL);
	if (rc) {
		rpcrdma_svc_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

int rpcrdma_svc_create(const char *host, uint16_t port, const struct rpcrdma_svc_opts *opts,
		       struct rpcrdma_svc **out)
{
	return svc_new(host, port ? port : RPCRDMA_DEFAULT_PORT, opts, out);
}

int rpcrdma_svc_create_any(const char *host, const struct rpcrdma_svc_opts *opts,
			   struct rpcrdma_svc **out)
{
	return svc_new(host, 0, opts, out);
}

uint16_t rpcrdma_svc_port(const struct rpcrdma_svc *s)
{
	return s->port;
}

static int reg(struct rpcrdma_svc *s, uint32_t prog, uint32_t vers, rpcrdma_svc_dispatch_t fn,
	       rpcrdma_svc_tirpc_dispatch_t tfn, void *ctx)
{
	int rc = 0;

	futex_mutex_lock(&s->lock);
	for (uint32_t i = 0; i < s->nprogs; i++)
		if (s->progs[i].prog == prog && s->progs[i].vers == vers)
			rc = -EEXIST;
	if (!rc && s->nprogs >= SVC_MAX_PROGS)
		rc = -ENOSPC;
	if (!rc) {
		struct svc_prog *p = &s->progs[s->nprogs++];

		p->prog = prog;
		p->vers = vers;
		p->fn = fn;
		p->tfn = tfn;
		p->ctx = ctx;
	}
	futex_mutex_unlock(&s->lock);
	return rc;
}

int rpcrdma_svc_register(struct rpcrdma_svc *s, uint32_t prog, uint32_t vers,
			 rpcrdma_svc_dispatch_t dispatch, void *ctx)
{
	if (!s || !dispatch)
		return -EINVAL;
	return reg(s, prog, vers, dispatch, NULL, ctx);
}

int rpcrdma_svc_register_tirpc(struct rpcrdma_svc *s, uint32_t prog, uint32_t vers,
			       rpcrdma_svc_tirpc_dispatch_t dispatch)
{
	if (!s || !dispatch)
		return -EINVAL;
	return reg(s, prog, vers, NULL, dispatch, NULL);
}

int rpcrdma_svc_start(struct rpcrdma_svc *s)
{
	int rc;

	if (!s || s->started)
		return -EINVAL;
	/* the listener queues connections until the loop runs */
	if (s->rpcbind) {
		rc = svc_rpcb_set(s);
		if (rc)
			return rc;
	}
	rc = svc_loop_start(s);
	if (rc)
		svc_rpcb_unset(s);
	return rc;
}

int rpcrdma_svc_stop(struct rpcrdma_svc *s, int timeout_ms)
{
	if (!s)
		return -EINVAL;
	/* stop advertising before draining */
	svc_rpcb_unset(s);
	return svc_loop_stop(s, timeout_ms);
}

void rpcrdma_svc_destroy(struct rpcrdma_svc *s)
{
	if (!s)
		return;
	/* Reverse callers wake with -ECANCELED before the threads go. */
	bc_svc_stop(s->bc);
	if (s->started)
		rpcrdma_svc_stop(s, 0);
	svc_teardown(s);
	free(s);
}

int rpcrdma_svc_stats(struct rpcrdma_svc *s, struct rpcrdma_xprt_stats *st)
{
	if (!s || !st)
		return -EINVAL;
	futex_mutex_lock(&s->lock);
	*st = s->st;
	st->calls = __atomic_load_n(&s->ncalls, __ATOMIC_RELAXED);
	st->credits = s->credits;
	st->inline_send = s->inline_send;
	st->inline_recv = s->inline_recv;
	st->remote_invalidate = s->remote_inv;
	st->pull_bytes = s->pull_inuse;
	if (s->srq) {
		st->srq_depth = s->srq_depth;
		st->srq_capacity = s->srqp.count;
	}
	futex_mutex_unlock(&s->lock);
	if (s->drc) {
		struct svc_drc_stats ds;

		svc_drc_stats(s->drc, &ds);
		st->drc_hits = ds.hits;
		st->drc_inprogress_drops = ds.inprogress_drops;
		st->drc_evictions = ds.evictions;
	}
	return 0;
}

/* Lock held: connection @c's counters as the API shows them. */
static void conn_snapshot(const struct svc_conn *c, struct rpcrdma_svc_conn_stats *cs)
{
	*cs = c->cst;
	cs->calls = __atomic_load_n(&c->cst.calls, __ATOMIC_RELAXED);
	cs->peer = c->peer;
	cs->connected = c->up;
	cs->credits = c->svc->srq ? c->grant : c->svc->credits;
	cs->inline_send = c->lim.inline_send;
	cs->inline_recv = c->lim.inline_recv;
	cs->outstanding = c->held;
	cs->bytes_in = cs->inline_bytes_rx + cs->read_bytes;
	cs->bytes_out = cs->inline_bytes_tx + cs->write_bytes + cs->reply_bytes;
}

int rpcrdma_svc_conn_foreach(struct rpcrdma_svc *s, rpcrdma_svc_conn_fn fn, void *arg)
{
	struct rpcrdma_svc_conn_stats *v;
	uint32_t n = 0;
	int rc = 0;

	if (!s || !fn)
		return -EINVAL;
	futex_mutex_lock(&s->lock);
	v = calloc(s->nconns ? s->nconns : 1, sizeof(*v));
	if (!v) {
		futex_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	/* the list is newest first: fill from the end for oldest first */
	n = s->nconns;
	for (const struct svc_conn *c = s->conns; c && n; c = c->next)
		conn_snapshot(c, &v[--n]);
	n = s->nconns;
	futex_mutex_unlock(&s->lock);
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = fn(&v[i], arg);
	free(v);
	return rc;
}

#ifdef RPCRDMA_TEST_HOOKS
void rpcrdma_svc_set_testhook(struct rpcrdma_svc *s, const struct svc_testhook *h)
{
	futex_mutex_lock(&s->lock);
	s->hook = *h;
	futex_mutex_unlock(&s->lock);
}
#endif

uint32_t rpcrdma_svc_req_xid(const struct rpcrdma_svc_req *r)
{
	return r->call.xid;
}

uint32_t rpcrdma_svc_req_prog(const struct rpcrdma_svc_req *r)
{
	return r->call.prog;
}

uint32_t rpcrdma_svc_req_vers(const struct rpcrdma_svc_req *r)
{
	return r->call.vers;
}

uint32_t rpcrdma_svc_req_proc(const struct rpcrdma_svc_req *r)
{
	return r->call.proc;
}

const struct rpcrdma_rpc_auth *rpcrdma_svc_req_cred(const struct rpcrdma_svc_req *r)
{
	return &r->call.cred;
}

int rpcrdma_svc_req_authsys(const struct rpcrdma_svc_req *r, struct rpcrdma_rpc_authsys *s)
{
	if (!r || !s)
		return -EINVAL;
	if (r->call.cred.flavor != RPCRDMA_RPC_AUTH_SYS)
		return -ENOENT;
	return rpcrdma_rpc_auth_get_sys(&r->call.cred, s);
}

int rpcrdma_svc_req_caller(const struct rpcrdma_svc_req *r, struct sockaddr_storage *addr,
			   socklen_t *len)
{
	const struct sockaddr_storage *p = &r->conn->peer;

	if (!addr || !len)
		return -EINVAL;
	if (p->ss_family == AF_INET)
		*len = sizeof(struct sockaddr_in);
	else if (p->ss_family == AF_INET6)
		*len = sizeof(struct sockaddr_in6);
	else
		return -ENOTCONN;
	memcpy(addr, p, sizeof(*p));
	return 0;
}

int rpcrdma_svc_getargs(struct rpcrdma_svc_req *r, xdrproc_t xargs, void *args)
{
	if (!xargs)
		return 0;
	return (*xargs)(&r->xdrs, args) ? 0 : -EBADMSG;
}

void rpcrdma_svc_freeargs(struct rpcrdma_svc_req *r, xdrproc_t xargs, void *args)
{
	(void)r;
	if (xargs)
		xdr_free(xargs, args);
}

int rpcrdma_svc_req_read_chunk(struct rpcrdma_svc_req *r, uint32_t i, const void **data,
			       uint32_t *len, uint32_t *position)
{
	if (i >= r->nrc)
		return -ENOENT;
	*data = r->rc[i].data;
	*len = r->rc[i].len;
	if (position)
		*position = r->rc[i].pos;
	return 0;
}

uint64_t rpcrdma_svc_req_write_space(const struct rpcrdma_svc_req *r, uint32_t i)
{
	uint64_t w = 0;

	if (rpcrdma1_write_chunk_length(&r->h.chunks, i, &w))
		return 0;
	return w;
}

int rpcrdma_svc_reply(struct rpcrdma_svc_req *r, xdrproc_t xres, void *res)
{
	return svc_reply_results(r, xres, res);
}

int rpcrdma_svc_error(struct rpcrdma_svc_req *r, uint32_t accept_stat)
{
	struct rpcrdma_rpc_reply rep;

	rpcrdma_rpc_reply_accepted(&rep, r->call.xid, xprt_error_accept_stat(accept_stat));
	return svc_reply_msg(r, &rep, NULL, NULL);
}

void svc_req_drop(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = r->conn->svc;

	futex_mutex_lock(&s->lock);
	svc_req_end(r, !r->conn->dead);
	futex_mutex_unlock(&s->lock);
}

int svc_reply_raw(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep, xdrproc_t xres,
		  void *res)
{
	return svc_reply_msg(r, rep, xres, res);
}
