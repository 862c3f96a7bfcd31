// SPDX-License-Identifier: MIT
/*
 * The server's shared receive pool (RPCRDMA_SVC_OPT_SRQ, svc_srq.c), two
 * processes over loopback: credits 16, a pool of 32 receives, 8
 * connections (8 x 16 = 128 credits at most: the pool is short).
 *   - The first connection, alone, is granted all 16; the ones that come
 *     after share what is left: every grant is at least 1, grants above
 *     one come only out of the pool (the sum is at most the pool plus one
 *     for each connection left at the floor: RFC 8166 §3.3.1, each credit
 *     is backed by a posted receive), and some connection is granted
 *     fewer than 16.
 *   - The first connection then has 16 slow calls on the wire at once
 *     while the others are idle: all succeed, and the client saw 16 on
 *     the wire.
 *   - Every connection then has 16 slow calls outstanding at once (each
 *     its whole grant on the wire, the server holding them all).
 *   - Every connection then issues 24 echo calls at once (more than any
 *     grant): each reply carries the bytes of its call (checksums), and no
 *     connection was lost or re-made (a Send meeting an empty pool would
 *     end its connection with a Terminate).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

#define NCONN  8
#define NECHO  24
#define ECHO_N 600

static atomic_int ndone, nbad;

struct echo {
	uint8_t out[ECHO_N], in[ECHO_N];
	struct xt_opaque a, r;
	uint32_t len;
};

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct echo *e = arg;

	(void)c;
	(void)res;
	if (status || e->r.len != e->len || memcmp(e->in, e->out, e->len) ||
	    xt_hash(e->in, e->len) != xt_hash(e->out, e->len))
		atomic_fetch_add(&nbad, 1);
	atomic_fetch_add(&ndone, 1);
}

static void slow_cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	if (status)
		atomic_fetch_add(&nbad, 1);
	atomic_fetch_add(&ndone, 1);
}

static void wait_done(int n)
{
	for (int i = 0; i < 3000 && atomic_load(&ndone) < n; i++)
		usleep(10000);
}

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_CREDITS |
						   RPCRDMA_SVC_OPT_WORKERS | RPCRDMA_SVC_OPT_SRQ,
				      .credits = 16,
				      .workers = 16,
				      .srq_depth = 32};
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_CREDITS, .credits = 16};
	struct tl_server srv;
	struct rpcrdma_clnt *c[NCONN];
	struct rpcrdma_xprt_stats st;
	static struct echo e[NCONN][NECHO];
	static u_int held[NCONN][16];
	u_int ms = 200, res[16], mx = 0, sum = 0, low = 16, ones = 0;
	int rc, want = 0;

	rc = xt_server_start(&srv, &so, NULL);
	if (rc)
		return 1;
	for (int i = 0; i < NCONN; i++) {
		rc = rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &co, &c[i]);
		XT_CHECK(rc == 0);
		if (rc) {
			xt_server_stop(&srv);
			return 1;
		}
		/* one call each: the reply carries the connection's grant */
		XT_CHECK(rpcrdma_clnt_call(c[i], XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	}
	for (int i = 0; i < NCONN; i++) {
		XT_CHECK(rpcrdma_clnt_stats(c[i], &st) == 0);
		printf("connection %d granted %u\n", i, st.credits);
		XT_CHECK(st.credits >= 1 && st.credits <= 16);
		if (i == 0)
			XT_CHECK(st.credits == 16);
		sum += st.credits;
		if (st.credits < low)
			low = st.credits;
		ones += st.credits == 1;
	}
	/* raised only within the pool; beyond it, one credit each */
	XT_CHECK(sum <= 32 + ones);
	XT_CHECK(low < 16);

	/* all of connection 0's credits at once, the others idle */
	for (int i = 0; i < 16; i++)
		XT_CHECK(rpcrdma_clnt_call_async(c[0], XT_SLOW, (xdrproc_t)xdr_u_int, &ms,
						 (xdrproc_t)xdr_u_int, &res[i], NULL, slow_cb,
						 NULL) == 0);
	want += 16;
	wait_done(want);
	XT_CHECK(atomic_load(&ndone) == want && atomic_load(&nbad) == 0);
	XT_CHECK(rpcrdma_clnt_call(c[0], XT_MAXINFL, NULL, NULL, (xdrproc_t)xdr_u_int, &mx, NULL) ==
		 0);
	XT_CHECK(rpcrdma_clnt_stats(c[0], &st) == 0);
	printf("connection 0: %u on the wire at most, server %u in progress\n", st.max_outstanding,
	       mx);
	XT_CHECK(st.max_outstanding == 16);

	/* every connection's whole grant held by the server at once: a
	 * grant the pool did not back would meet an empty queue here */
	ms = 100;
	for (int i = 0; i < NCONN; i++)
		for (int k = 0; k < 16; k++)
			XT_CHECK(rpcrdma_clnt_call_async(c[i], XT_SLOW, (xdrproc_t)xdr_u_int, &ms,
							 (xdrproc_t)xdr_u_int, &held[i][k], NULL,
							 slow_cb, NULL) == 0);
	want += NCONN * 16;
	wait_done(want);
	XT_CHECK(atomic_load(&ndone) == want && atomic_load(&nbad) == 0);

	/* every connection over its grant at once, payloads checked */
	for (int i = 0; i < NCONN; i++) {
		for (int k = 0; k < NECHO; k++) {
			struct echo *p = &e[i][k];

			p->len = 64u + (uint32_t)((i * NECHO + k) * 37) % (ECHO_N - 64);
			xt_fill(p->out, p->len, (uint32_t)(i * 1000 + k));
			p->a = (struct xt_opaque){.val = (char *)p->out, .len = p->len};
			p->r = (struct xt_opaque){.val = (char *)p->in, .len = 0};
			XT_CHECK(rpcrdma_clnt_call_async(c[i], XT_ECHO, (xdrproc_t)xdr_xt_opaque,
							 &p->a, (xdrproc_t)xdr_xt_opaque, &p->r,
							 NULL, cb, p) == 0);
		}
	}
	want += NCONN * NECHO;
	wait_done(want);
	XT_CHECK(atomic_load(&ndone) == want && atomic_load(&nbad) == 0);
	for (int i = 0; i < NCONN; i++) {
		XT_CHECK(rpcrdma_clnt_stats(c[i], &st) == 0);
		XT_CHECK(st.conn_errors == 0 && st.reconnects == 0);
		rpcrdma_clnt_destroy(c[i]);
	}
	printf("%d calls over %d connections, %d failed\n", want + NCONN, NCONN,
	       atomic_load(&nbad));
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
