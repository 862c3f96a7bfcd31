// SPDX-License-Identifier: MIT
/*
 * Server memory for pulled Read chunks is bounded (server.h,
 * RPCRDMA_SVC_OPT_MAX_PULL), two processes over loopback. The server's
 * pull budget is 1 MiB and it runs 4 workers:
 *   - 8 asynchronous WRITEs of 384 KiB each at once: at most two fit the
 *     budget together, the others wait for memory, and every call still
 *     completes once with the right checksum; the server never had more
 *     than two of them in its procedure at once (XT_MAXINFL, although 4
 *     workers were free);
 *   - a WRITE of 2 MiB (more than the whole budget) is pulled alone and
 *     works; one of 4 MiB (more than max_chunk_bytes, 3 MiB) is refused
 *     with RDMA_ERROR ERR_CHUNK (-EREMOTEIO), without being pulled;
 *   - a Long Call (Position-Zero) with a Read chunk under the same budget
 *     works;
 *   - every request freed its staging buffer: a second round of 8 works
 *     the same (a leak of budget would stall it).
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

#define NCALLS 8

static atomic_int ndone, nbad;

struct one {
	struct xt_write_args a;
	struct xt_write_res res;
	uint64_t want;
};

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct one *o = arg;

	(void)c;
	(void)res;
	if (status || o->res.len != o->a.data.len || o->res.hash != o->want)
		atomic_fetch_add(&nbad, 1);
	atomic_fetch_add(&ndone, 1);
}

static void round_of(struct rpcrdma_clnt *c, uint8_t *buf, uint32_t len, int round)
{
	static struct one o[NCALLS];

	atomic_store(&ndone, 0);
	atomic_store(&nbad, 0);
	for (int i = 0; i < NCALLS; i++) {
		memset(&o[i], 0, sizeof(o[i]));
		o[i].a.seed = (uint32_t)(round * 100 + i);
		o[i].a.data.base = buf + (size_t)i * len;
		o[i].a.data.len = len;
		o[i].want = xt_hash(o[i].a.data.base, len) ^ o[i].a.seed;
		XT_CHECK(rpcrdma_clnt_call_async(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &o[i].a,
						 (xdrproc_t)xdr_xt_write_res, &o[i].res, NULL, cb,
						 &o[i]) == 0);
	}
	for (int i = 0; i < 1000 && atomic_load(&ndone) < NCALLS; i++)
		usleep(10000);
	XT_CHECK(atomic_load(&ndone) == NCALLS && atomic_load(&nbad) == 0);
}

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_MAX_PULL |
						   RPCRDMA_SVC_OPT_WORKERS |
						   RPCRDMA_SVC_OPT_MAX_CHUNK,
				      .max_pull_bytes = 1u << 20,
				      .max_chunk_bytes = 3u << 20,
				      .workers = 4};
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
	uint32_t len = 384u << 10, big = 4u << 20;
	uint8_t *buf = malloc((size_t)NCALLS * len), *bbuf = malloc(big);
	u_int mx = 0;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	xt_fill(buf, (size_t)NCALLS * len, 11);
	xt_fill(bbuf, big, 12);
	if (xt_server_start(&srv, &so, NULL))
		return 1;
	if (rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, NULL, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	/* credits: let the grant reach the server's 64 first */
	XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	round_of(c, buf, len, 1);
	/* More than the whole budget: pulled alone. More than max_chunk:
	 * ERR_CHUNK, nothing pulled. */
	{
		struct xt_write_args a = {.seed = 1, .data = {bbuf, big / 2, 0}};
		struct xt_write_res res = {0};

		rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				       (xdrproc_t)xdr_xt_write_res, &res, &o);
		XT_CHECK(rc == 0 && res.hash == (xt_hash(bbuf, big / 2) ^ 1));
		a.data.len = big;
		rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				       (xdrproc_t)xdr_xt_write_res, &res, &o);
		XT_CHECK(rc == -EREMOTEIO && r.rdma_err == 2);
	}
	/* A Long Call with a Read chunk under the budget. */
	{
		struct xt_write_args a = {.seed = 3, .data = {bbuf, 500000, 0}};
		struct xt_write_res res = {0};

		o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_FLAGS;
		o.flags = RPCRDMA_CALL_F_LONG;
		rc = rpcrdma_clnt_call(c, XT_WRITE, (xdrproc_t)xdr_xt_write_args, &a,
				       (xdrproc_t)xdr_xt_write_res, &res, &o);
		XT_CHECK(rc == 0 && r.call_proc == 1 && r.read_chunks == 2 &&
			 res.hash == (xt_hash(bbuf, 500000) ^ 3));
	}
	round_of(c, buf, len, 2);
	XT_CHECK(rpcrdma_clnt_call(c, XT_MAXINFL, NULL, NULL, (xdrproc_t)xdr_u_int, &mx, NULL) ==
		 0);
	/* The pull budget held at most two 384 KiB calls at once. */
	XT_CHECK(mx >= 1 && mx <= 2);
	printf("most WRITEs in progress at once: %u (budget 1 MiB, 384 KiB each)\n", mx);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	free(buf);
	free(bbuf);
	return xt_result();
}
