// SPDX-License-Identifier: MIT
/*
 * Credits (RFC 8166 §3.3.1), two processes over loopback: the server
 * grants 4 and runs 8 workers (so it could run more calls at once if the
 * client sent them). The client must start a connection with one call on
 * the wire (a second call only arrives after the first reply: the server
 * sees one call in progress for both), then never exceed the grant of 4:
 * the server's high-water mark of calls in progress, and the client's own
 * count of calls on the wire, stay at or under 4 while 16 slow calls are
 * issued at once; the calls that had to wait are counted as credit stalls.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

static atomic_int ndone, nbad;

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)arg;
	if (status || *(u_int *)res < 1 || *(u_int *)res > 4)
		atomic_fetch_add(&nbad, 1);
	atomic_fetch_add(&ndone, 1);
}

static void wait_done(int n)
{
	for (int i = 0; i < 1000 && atomic_load(&ndone) < n; i++)
		usleep(10000);
}

int main(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask =
					  RPCRDMA_SVC_OPT_CREDITS | RPCRDMA_SVC_OPT_WORKERS,
				      .credits = 4,
				      .workers = 8};
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct rpcrdma_xprt_stats st;
	u_int ms = 150, r1 = 0, r2 = 0, res[16], mx = 0;
	int rc;

	rc = xt_server_start(&srv, &so, NULL);
	if (rc)
		return 1;
	rc = rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, NULL, &c);
	if (rc) {
		xt_server_stop(&srv);
		return 1;
	}
	/* First two calls of the connection, issued back to back. */
	XT_CHECK(rpcrdma_clnt_call_async(c, XT_SLOW, (xdrproc_t)xdr_u_int, &ms,
					 (xdrproc_t)xdr_u_int, &r1, NULL, cb, NULL) == 0);
	XT_CHECK(rpcrdma_clnt_call_async(c, XT_SLOW, (xdrproc_t)xdr_u_int, &ms,
					 (xdrproc_t)xdr_u_int, &r2, NULL, cb, NULL) == 0);
	wait_done(2);
	XT_CHECK(r1 == 1 && r2 == 1); /* started at one credit */
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.credits == 4 && st.credit_stalls >= 1);

	ms = 30;
	for (int i = 0; i < 16; i++)
		XT_CHECK(rpcrdma_clnt_call_async(c, XT_SLOW, (xdrproc_t)xdr_u_int, &ms,
						 (xdrproc_t)xdr_u_int, &res[i], NULL, cb,
						 NULL) == 0);
	wait_done(18);
	XT_CHECK(atomic_load(&ndone) == 18 && atomic_load(&nbad) == 0);
	XT_CHECK(rpcrdma_clnt_call(c, XT_MAXINFL, NULL, NULL, (xdrproc_t)xdr_u_int, &mx, NULL) ==
		 0);
	XT_CHECK(mx >= 2 && mx <= 4);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.max_outstanding == 4 && st.credit_stalls >= 12 && st.credits == 4);
	printf("server max in progress %u, client max on wire %u, stalls %llu\n", mx,
	       st.max_outstanding, (unsigned long long)st.credit_stalls);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
