// SPDX-License-Identifier: MIT
/* The XTEST program: server side and XDR routines (see xprt_test.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xprt/xprt_test.h"

int xt_failures;

bool_t xdr_xt_write_args(XDR *x, struct xt_write_args *a)
{
	return xdr_u_int(x, &a->seed) && xdr_rpcrdma_bulk(x, &a->data);
}

bool_t xdr_xt_write_res(XDR *x, struct xt_write_res *r)
{
	return xdr_u_int(x, &r->len) && xdr_uint64_t(x, &r->hash);
}

bool_t xdr_xt_read_args(XDR *x, struct xt_read_args *a)
{
	return xdr_u_int(x, &a->len) && xdr_u_int(x, &a->seed);
}

bool_t xdr_xt_multi_args(XDR *x, struct xt_multi_args *a)
{
	return xdr_rpcrdma_bulk(x, &a->a) && xdr_u_int(x, &a->x) && xdr_rpcrdma_bulk(x, &a->b);
}

bool_t xdr_xt_multi_res(XDR *x, struct xt_multi_res *r)
{
	return xdr_uint64_t(x, &r->ha) && xdr_u_int(x, &r->x) && xdr_uint64_t(x, &r->hb);
}

bool_t xdr_xt_bulk8_res(XDR *x, struct xt_bulk8_res *r)
{
	return xdr_uint64_t(x, &r->hash) && xdr_u_int(x, &r->total);
}

bool_t xdr_xt_opaque(XDR *x, struct xt_opaque *o)
{
	return xdr_bytes(x, &o->val, &o->len, ~0u);
}

bool_t xdr_xt_readn_args(XDR *x, struct xt_readn_args *a)
{
	return xdr_u_int(x, &a->n) && xdr_u_int(x, &a->len) && xdr_u_int(x, &a->seed) &&
	       xdr_u_int(x, &a->tail);
}

bool_t xdr_xt_readn_res(XDR *x, struct xt_readn_res *r)
{
	if (!xdr_u_int(x, &r->n) || r->n > XT_READN_MAX)
		return FALSE;
	for (uint32_t i = 0; i < r->n; i++)
		if (!xdr_rpcrdma_bulk(x, &r->b[i]))
			return FALSE;
	return xdr_xt_opaque(x, &r->tail);
}

static void readn(struct rpcrdma_svc_req *req)
{
	struct xt_readn_args a = {0};
	struct xt_readn_res r;
	uint8_t *mem;
	int ok;

	memset(&r, 0, sizeof(r));
	ok = rpcrdma_svc_getargs(req, (xdrproc_t)xdr_xt_readn_args, &a) == 0 &&
	     a.n <= XT_READN_MAX && a.len <= (16u << 20) && a.tail <= (1u << 20);
	mem = ok ? malloc((size_t)a.n * a.len + a.tail + 1) : NULL;
	if (!mem) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
		return;
	}
	r.n = a.n;
	for (uint32_t i = 0; i < a.n; i++) {
		r.b[i].base = mem + (size_t)i * a.len;
		r.b[i].len = a.len;
		xt_fill(r.b[i].base, a.len, a.seed + i);
	}
	r.tail.val = (char *)mem + (size_t)a.n * a.len;
	r.tail.len = a.tail;
	xt_fill(r.tail.val, a.tail, a.seed ^ 0x5a5au);
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_xt_readn_res, &r);
	free(mem);
}

static atomic_uint inflight, maxinfl;

static void dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	(void)args;
	(void)ctx;
	unsigned int now = atomic_fetch_add(&inflight, 1) + 1;
	unsigned int m = atomic_load(&maxinfl);

	while (now > m && !atomic_compare_exchange_weak(&maxinfl, &m, now))
		;
	switch (proc) {
	case XT_NULL:
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, NULL, NULL);
		return;
	case XT_ECHO: {
		struct xt_opaque o = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_xt_opaque, &o)) {
			atomic_fetch_sub(&inflight, 1);
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_xt_opaque, &o);
		rpcrdma_svc_freeargs(req, (xdrproc_t)xdr_xt_opaque, &o);
		return;
	}
	case XT_WRITE: {
		struct xt_write_args a = {0};
		struct xt_write_res r = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_xt_write_args, &a)) {
			atomic_fetch_sub(&inflight, 1);
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		r.len = a.data.len;
		r.hash = xt_hash(a.data.base, a.data.len) ^ a.seed;
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_xt_write_res, &r);
		return;
	}
	case XT_READ: {
		struct xt_read_args a = {0};
		rpcrdma_bulk b = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_xt_read_args, &a) ||
		    a.len > (64u << 20)) {
			atomic_fetch_sub(&inflight, 1);
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		b.base = malloc(a.len ? a.len : 1);
		b.len = a.len;
		xt_fill(b.base, a.len, a.seed);
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
		free(b.base);
		return;
	}
	case XT_MULTI: {
		struct xt_multi_args a = {0};
		struct xt_multi_res r = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_xt_multi_args, &a)) {
			atomic_fetch_sub(&inflight, 1);
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		r.ha = xt_hash(a.a.base, a.a.len);
		r.x = a.x;
		r.hb = xt_hash(a.b.base, a.b.len);
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_xt_multi_res, &r);
		return;
	}
	case XT_ECHOBULK: {
		rpcrdma_bulk b = {0};

		if (rpcrdma_svc_getargs(req, (xdrproc_t)xdr_rpcrdma_bulk, &b)) {
			atomic_fetch_sub(&inflight, 1);
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
		rpcrdma_svc_freeargs(req, (xdrproc_t)xdr_rpcrdma_bulk, &b);
		return;
	}
	case XT_SLOW: {
		u_int ms = 0, seen = now;

		rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &ms);
		usleep(ms * 1000u);
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &seen);
		return;
	}
	case XT_BULK8: {
		rpcrdma_bulk b[8];
		uint8_t cat[4096];
		u_int total = 0;
		uint64_t h;
		bool_t ok = TRUE;

		memset(b, 0, sizeof(b));
		for (int i = 0; i < 8 && ok; i++)
			ok = rpcrdma_svc_getargs(req, (xdrproc_t)xdr_rpcrdma_bulk, &b[i]) == 0 &&
			     total + b[i].len <= sizeof(cat);
		for (int i = 0; i < 8 && ok; i++) {
			memcpy(cat + total, b[i].base, b[i].len);
			total += b[i].len;
		}
		atomic_fetch_sub(&inflight, 1);
		if (!ok) {
			rpcrdma_svc_error(req, RPCRDMA_RPC_GARBAGE_ARGS);
			return;
		}
		h = xt_hash(cat, total);
		struct xt_bulk8_res res = {h, total};

		rpcrdma_svc_reply(req, (xdrproc_t)xdr_xt_bulk8_res, &res);
		return;
	}
	case XT_READN:
		atomic_fetch_sub(&inflight, 1);
		readn(req);
		return;
	case XT_MAXINFL: {
		u_int v = atomic_load(&maxinfl);

		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &v);
		return;
	}
	default:
		atomic_fetch_sub(&inflight, 1);
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
}

int xt_server_start(struct tl_server *srv, const struct rpcrdma_svc_opts *opts,
		    void (*extra)(struct rpcrdma_svc *svc))
{
	return xt_server_start_port(srv, 0, opts, extra);
}

static struct rpcrdma_svc *xt_stats_svc;

static bool_t xdr_xt_srv_stats(XDR *x, struct xt_srv_stats *st)
{
	return xdr_uint64_t(x, &st->conn_errors) && xdr_uint64_t(x, &st->connections) &&
	       xdr_uint64_t(x, &st->pull_timeouts) && xdr_uint64_t(x, &st->pull_bytes);
}

static void xt_stats_dispatch(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	struct rpcrdma_xprt_stats st;
	struct xt_srv_stats v;

	(void)args;
	(void)ctx;
	if (proc != 1 || rpcrdma_svc_stats(xt_stats_svc, &st)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	v.conn_errors = st.conn_errors;
	v.connections = st.connections;
	v.pull_timeouts = st.pull_timeouts;
	v.pull_bytes = st.pull_bytes;
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_xt_srv_stats, &v);
}

void xt_stats_register(struct rpcrdma_svc *svc)
{
	xt_stats_svc = svc;
	if (rpcrdma_svc_register(svc, XT_STATS_PROG, 1, xt_stats_dispatch, NULL))
		xt_failures++;
}

int xt_server_stats(uint16_t port, struct xt_srv_stats *st)
{
	struct rpcrdma_clnt *c;
	int rc = rpcrdma_clnt_create("127.0.0.1", port, XT_STATS_PROG, 1, NULL, &c);

	if (rc)
		return rc;
	rc = rpcrdma_clnt_call(c, 1, NULL, NULL, (xdrproc_t)xdr_xt_srv_stats, st, NULL);
	rpcrdma_clnt_destroy(c);
	return rc;
}

struct xt_child {
	uint16_t port; /* 0: any */
	const struct rpcrdma_svc_opts *opts;
	void (*extra)(struct rpcrdma_svc *svc);
};

static int xt_child_start(void *arg, struct rpcrdma_svc **svc)
{
	struct xt_child *x = arg;
	int rc;

	rc = x->port ? rpcrdma_svc_create(tl_addr(), x->port, x->opts, svc)
		     : rpcrdma_svc_create_any(tl_addr(), x->opts, svc);
	if (!rc)
		rc = rpcrdma_svc_register(*svc, XTEST_PROG, XTEST_VERS, dispatch, NULL);
	if (!rc && x->extra)
		x->extra(*svc);
	if (!rc)
		rc = rpcrdma_svc_start(*svc);
	return rc;
}

int xt_server_start_port(struct tl_server *srv, uint16_t want, const struct rpcrdma_svc_opts *opts,
			 void (*extra)(struct rpcrdma_svc *svc))
{
	struct xt_child x = {want, opts, extra};
	struct tl_child ch = {.start = xt_child_start, .failures = &xt_failures, .arg = &x};

	return tl_server_fork(srv, &ch);
}

int xt_server_stop(struct tl_server *srv)
{
	return tl_server_stop(srv, 5000);
}

int xt_result(void)
{
	if (xt_failures) {
		fprintf(stderr, "%d check(s) failed\n", xt_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
