// SPDX-License-Identifier: MIT
/*
 * Persistent reconnect (issue 20): a connection lost while a call is on
 * the wire, then every new connection cut in its MPA exchange for a while
 * (fault injection on the client's device, RPCRDMA_SIW_FAULT=cut-setup:N:K,
 * siw_fault.h). The client keeps connecting, with a growing pause, until
 * the call's deadline:
 *   recovers   5 setups cut (about 3 s of attempts) under a 20 s timeout:
 *              the call succeeds on the 6th connection, and the server
 *              saw its retransmission with the XID of the first
 *              transmission (RFC 8166 §3.3); `retries` (3 here) does not
 *              bound the attempts
 *   deadline   every setup cut, 1.5 s timeout: the call fails at its
 *              deadline (not before, not much after) with -ETIMEDOUT and
 *              the result's conn_error names the last connect error
 * Before persistent reconnect the first path failed with -ECONNRESET
 * within a second: `retries` bounded the connection attempts.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_int.h"
#include "xprt/xprt_test.h"

#define XIDLOG_PROG 0x2000009au
#define XIDLOG_MAX  64

/* ---- server child: XIDLOG proc 1 (u_int ms -> u_int transmissions of
 * this XID seen so far, this one included) sleeps ms first; proc 2
 * (u_int xid -> u_int times seen). ---- */

static uint32_t seen_xid[XIDLOG_MAX];
static uint32_t seen_n[XIDLOG_MAX];
static int nseen;

static u_int xid_count(uint32_t xid, bool add)
{
	for (int i = 0; i < nseen; i++) {
		if (seen_xid[i] == xid) {
			if (add)
				seen_n[i]++;
			return seen_n[i];
		}
	}
	if (!add || nseen == XIDLOG_MAX)
		return 0;
	seen_xid[nseen] = xid;
	seen_n[nseen] = 1;
	return seen_n[nseen++];
}

static void xidlog(struct rpcrdma_svc_req *req, uint32_t proc, XDR *args, void *ctx)
{
	u_int a = 0, r;

	(void)args;
	(void)ctx;
	if ((proc != 1 && proc != 2) || rpcrdma_svc_getargs(req, (xdrproc_t)xdr_u_int, &a)) {
		rpcrdma_svc_error(req, RPCRDMA_RPC_PROC_UNAVAIL);
		return;
	}
	if (proc == 1) {
		usleep(a * 1000u);
		r = xid_count(rpcrdma_svc_req_xid(req), true);
	} else {
		r = xid_count(a, false);
	}
	rpcrdma_svc_reply(req, (xdrproc_t)xdr_u_int, &r);
}

static void extra(struct rpcrdma_svc *svc)
{
	if (rpcrdma_svc_register(svc, XIDLOG_PROG, 1, xidlog, NULL))
		xt_failures++;
}

/* ---- client ---- */

static atomic_int ncb, cb_rc;

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	(void)c;
	(void)res;
	(void)arg;
	atomic_store(&cb_rc, status);
	atomic_fetch_add(&ncb, 1);
}

/* A client whose device cuts connection setups 2..1+@cuts (1 is create). */
static struct rpcrdma_clnt *client(uint16_t port, uint32_t cuts, uint32_t tmo_ms)
{
	struct rpcrdma_clnt_opts co = {.comp_mask = RPCRDMA_CLNT_OPT_RETRIES |
						    RPCRDMA_CLNT_OPT_CONNECT_TIMEOUT |
						    RPCRDMA_CLNT_OPT_TIMEOUT,
				       .retries = 3,
				       .connect_timeout_ms = 2000,
				       .timeout_ms = tmo_ms};
	struct rpcrdma_clnt *c = NULL;
	char f[64];

	snprintf(f, sizeof(f), "cut-setup:2:%u", cuts);
	setenv("RPCRDMA_SIW_FAULT", f, 1);
	if (rpcrdma_clnt_create("127.0.0.1", port, XIDLOG_PROG, 1, &co, &c))
		c = NULL;
	unsetenv("RPCRDMA_SIW_FAULT");
	XT_CHECK(c != NULL);
	return c;
}

/* recovers: see the top. */
static void path_recovers(struct rpcrdma_clnt *c, struct rpcrdma_clnt *ctl)
{
	struct rpcrdma_call_result r = {0};
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
	struct rpcrdma_xprt_stats st;
	u_int ms = 300, got = 0, xid, n = 0;
	uint64_t t0;

	XT_CHECK(rpcrdma_clnt_call(c, 2, (xdrproc_t)xdr_u_int, &ms, (xdrproc_t)xdr_u_int, &got,
				   NULL) == 0);
	t0 = tl_now_ms();
	XT_CHECK(rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &ms, (xdrproc_t)xdr_u_int,
					 &got, &o, cb, NULL) == 0);
	usleep(100000); /* the server runs it; its reply will find no connection */
	XT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	for (int i = 0; i < 2000 && atomic_load(&ncb) < 1; i++)
		usleep(10000);
	printf("recovers: rc %d after %llu ms, transmissions %u, conn_error %d\n",
	       atomic_load(&cb_rc), (unsigned long long)(tl_now_ms() - t0), r.transmissions,
	       r.conn_error);
	XT_CHECK(atomic_load(&ncb) == 1 && atomic_load(&cb_rc) == 0);
	XT_CHECK(r.transmissions >= 2 && r.conn_error == 0);
	/* The handler ran under one XID (no DRC on this server) for the first
	 * transmission, whose reply was lost with its connection, and for the
	 * one answered; on a loaded machine a retransmission may itself be
	 * lost with a connection before the server reads it. */
	XT_CHECK(got >= 2 && got <= r.transmissions);
	xid = r.xid;
	XT_CHECK(rpcrdma_clnt_call(ctl, 2, (xdrproc_t)xdr_u_int, &xid, (xdrproc_t)xdr_u_int, &n,
				   NULL) == 0);
	XT_CHECK(n == got);
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.reconnects >= 1 && st.retransmits == r.transmissions - 1);
	usleep(100000);
	XT_CHECK(atomic_load(&ncb) == 1); /* exactly one callback */
}

/* deadline: see the top. */
static void path_deadline(struct rpcrdma_clnt *c)
{
	struct rpcrdma_call_result r = {0};
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = &r};
	u_int ms = 0, got = 0;
	uint64_t t0, el;
	int rc;

	XT_CHECK(rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &ms, (xdrproc_t)xdr_u_int, &got,
				   NULL) == 0);
	XT_CHECK(rpcrdma_clnt_test_disconnect(c) == 0);
	usleep(50000);
	t0 = tl_now_ms();
	rc = rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &ms, (xdrproc_t)xdr_u_int, &got, &o);
	el = tl_now_ms() - t0;
	printf("deadline: rc %d after %llu ms, conn_error %d (%s)\n", rc, (unsigned long long)el,
	       r.conn_error, rpcrdma_strerror(r.conn_error));
	XT_CHECK(rc == -ETIMEDOUT && r.status == -ETIMEDOUT);
	XT_CHECK(el >= 1450 && el <= 2500);
	XT_CHECK(r.conn_error < 0 && r.conn_error != -ETIMEDOUT);
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c, *ctl = NULL;

	signal(SIGPIPE, SIG_IGN);
	if (xt_server_start(&srv, NULL, extra))
		return 1;
	if (rpcrdma_clnt_create("127.0.0.1", srv.port, XIDLOG_PROG, 1, NULL, &ctl)) {
		xt_server_stop(&srv);
		return 1;
	}
	c = client(srv.port, 5, 20000);
	if (c) {
		path_recovers(c, ctl);
		rpcrdma_clnt_destroy(c);
	}
	c = client(srv.port, 1000000, 1500);
	if (c) {
		path_deadline(c);
		rpcrdma_clnt_destroy(c);
	}
	rpcrdma_clnt_destroy(ctl);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
