// SPDX-License-Identifier: MIT
/*
 * Connection loss (RFC 8166 §3.3 / Linux xprtrdma behaviour): the
 * connection drops while calls are outstanding (one of them with a 1 MiB
 * Write chunk exposed); the client fences the old registrations,
 * re-connects, and retransmits every outstanding call with the same XID
 * on the new connection; each call completes exactly once with the right
 * data. With the server gone, a call fails at its deadline with
 * -ETIMEDOUT (the client keeps reconnecting until then; the result's
 * conn_error says why it could not) instead of hanging.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "util/be.h"
#include "xprt/xprt_test.h"

static atomic_int ndone, nbad;
static uint32_t xids[8];
static int nx;

static void on_send(void *arg, const uint8_t *hdr, size_t len, size_t mlen)
{
	(void)arg;
	(void)len;
	(void)mlen;
	if (nx < 8)
		xids[nx++] = get_be32(hdr);
}

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	if (status)
		atomic_fetch_add(&nbad, 1);
	atomic_fetch_add(&ndone, 1);
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_RETRIES |
						    RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT,
				       .retries = 2,
				       .connect_timeout_ms = 1000};
	struct clnt_testhook hook = {.on_send = on_send};
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_call_result r;
	u_int ms = 300, seen = 0;
	uint32_t len = 1u << 20;
	uint8_t *buf = calloc(1, len), *exp = malloc(len);
	struct xt_read_args ra = {len, 9};
	rpcrdma_bulk rb = {0};
	struct rpcrdma_call_opts o = {.comp_mask =
					  RPCRDMA_CALL_OPT_RECV_BULK | RPCRDMA_CALL_OPT_RESULT,
				      .nrecv_bulk = 1,
				      .result = &r};

	signal(SIGPIPE, SIG_IGN);
	o.recv_bulk[0].base = buf;
	o.recv_bulk[0].len = len;
	xt_fill(exp, len, 9);
	if (xt_server_start(&srv, NULL, NULL))
		return 1;
	if (rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &co, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	rpcrdma_clnt_set_testhook(c, &hook);
	/* A slow call on the wire, then the connection drops under it. */
	XT_CHECK(rpcrdma_clnt_call_async(c, XT_SLOW, (xdrproc_t)xdr_u_int, &ms,
					 (xdrproc_t)xdr_u_int, &seen, NULL, cb, NULL) == 0);
	usleep(50000);
	XT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	for (int i = 0; i < 500 && atomic_load(&ndone) < 1; i++)
		usleep(10000);
	XT_CHECK(atomic_load(&ndone) == 1 && atomic_load(&nbad) == 0 && seen == 1);
	XT_CHECK(nx == 2 && xids[0] == xids[1]); /* retransmitted, same XID */
	/* A 1 MiB READ across another drop. */
	nx = 0;
	XT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	XT_CHECK(rpcrdma_clnt_call(c, XT_READ, (xdrproc_t)xdr_xt_read_args, &ra,
				   (xdrproc_t)xdr_rpcrdma_bulk, &rb, &o) == 0);
	XT_CHECK(rb.len == len && memcmp(buf, exp, len) == 0);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.reconnects == 2 && st.retransmits >= 1 && st.conn_errors == 2);
	printf("reconnects %llu retransmits %llu\n", (unsigned long long)st.reconnects,
	       (unsigned long long)st.retransmits);
	/* The server goes away: outstanding calls fail at their deadline,
	 * they do not hang; the result names the connection's error. */
	XT_CHECK(xt_server_stop(&srv) == 0);
	ms = 10;
	o.comp_mask = RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_TIMEOUT;
	o.timeout_ms = 1000;
	memset(&r, 0, sizeof(r));
	int rc = rpcrdma_clnt_call(c, XT_SLOW, (xdrproc_t)xdr_u_int, &ms, (xdrproc_t)xdr_u_int,
				   &seen, &o);
	XT_CHECK(rc == -ETIMEDOUT && r.conn_error == -ECONNREFUSED);
	rpcrdma_clnt_destroy(c);
	free(buf);
	free(exp);
	return xt_result();
}
