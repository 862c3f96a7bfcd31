// SPDX-License-Identifier: MIT
/* The XTEST program: server side and XDR routines (see xprt_test.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "xprt/xprt_test.h"

int xt_failures;

uint64_t xt_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

void xt_fill(void *p, size_t n, uint32_t seed)
{
	uint8_t *b = p;
	uint64_t x = seed | 1u;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)x;
	}
}

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

int xt_server_start(struct xt_server *srv, const struct rpcrdma_svc_opts *opts,
		    void (*extra)(struct rpcrdma_svc *svc))
{
	return xt_server_start_port(srv, 0, opts, extra);
}

int xt_server_start_port(struct xt_server *srv, uint16_t want, const struct rpcrdma_svc_opts *opts,
			 void (*extra)(struct rpcrdma_svc *svc))
{
	int portp[2], ctl[2];
	pid_t pid;

	if (pipe(portp) || pipe(ctl))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct rpcrdma_svc *svc;
		uint16_t port = 0;
		char c;
		int rc;

		close(portp[0]);
		close(ctl[1]);
		rc = want ? rpcrdma_svc_create("127.0.0.1", want, opts, &svc)
			  : rpcrdma_svc_create_any("127.0.0.1", opts, &svc);
		if (!rc)
			rc = rpcrdma_svc_register(svc, XTEST_PROG, XTEST_VERS, dispatch, NULL);
		if (!rc && extra)
			extra(svc);
		if (!rc)
			rc = rpcrdma_svc_start(svc);
		if (!rc)
			port = rpcrdma_svc_port(svc);
		if (write(portp[1], &port, sizeof(port)) != sizeof(port))
			_exit(3);
		if (rc)
			_exit(2);
		/* serve until the parent closes the control pipe */
		while (read(ctl[0], &c, 1) > 0)
			;
		rpcrdma_svc_stop(svc, 2000);
		rpcrdma_svc_destroy(svc);
		_exit(xt_failures ? 1 : 0);
	}
	close(portp[1]);
	close(ctl[0]);
	srv->pid = pid;
	srv->ctl = ctl[1];
	srv->port = 0;
	if (read(portp[0], &srv->port, sizeof(srv->port)) != sizeof(srv->port) || !srv->port) {
		close(portp[0]);
		return -EIO;
	}
	close(portp[0]);
	return 0;
}

int xt_server_stop(struct xt_server *srv)
{
	int st = 0;

	close(srv->ctl);
	for (int i = 0; i < 100; i++) {
		pid_t p = waitpid(srv->pid, &st, WNOHANG);

		if (p == srv->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
		usleep(50000);
	}
	kill(srv->pid, SIGKILL);
	waitpid(srv->pid, &st, 0);
	return 98;
}
