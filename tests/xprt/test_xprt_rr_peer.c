// SPDX-License-Identifier: MIT
/*
 * The requester against a responder that is not ours (fake_peer.c, the
 * provider API in a thread) answering every call in a responder-provided
 * Read chunk (docs/reliable-replies.md; the draft's RDMA_NOMSG with a
 * Position-Zero Read chunk). One mode per ctest entry:
 *   notify  a client that did NOT ask for reliable replies (issue 32,
 *           item 2; the draft: a requester that receives such a reply
 *           MUST notify pull completion, also for an XID it does not
 *           know): in Version One every call succeeds with its result
 *           and the responder receives RDMA_DONE for each XID it exposed
 *           and for the one to no call; in Version Two each call succeeds
 *           and the responder receives a pull-completion notification
 *           for each.
 *   strict  a client in RFC 5666 mode against a strict responder that
 *           posts exactly its grant of receives (4) and re-posts them only
 *           as it replies (issue 32, item 3; RFC 5666 §3.8: "the Done
 *           message consumes a credit at the RPC server", the client
 *           "MUST account for its required Done messages ... in its
 *           accounting of available credits"): 300 calls, 3 in flight,
 *           each succeeds, no receive overrun (one connection, no
 *           reconnect), every XID notified.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xprt/fake_peer.h"
#include "xprt/xprt_test.h"

static struct fake_peer fp;

static struct rpcrdma_clnt *client(enum rpcrdma_version_policy v, uint32_t credits, bool rr)
{
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_RDMA_VERSION |
						   RPCRDMA_CLNT_OPT_TIMEOUT |
						   RPCRDMA_CLNT_OPT_CREDITS,
				      .rdma_version = v,
				      .credits = credits,
				      .timeout_ms = 5000};
	struct rpcrdma_clnt *c = NULL;

	if (rr) {
		o.comp_mask |= RPCRDMA_CLNT_OPT_RELIABLE_REPLY;
		o.reliable_reply = 1;
	}
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", fp.port, XTEST_PROG, XTEST_VERS, &o, &c) == 0);
	return c;
}

static int call(struct rpcrdma_clnt *c, u_int arg)
{
	u_int res = 0;
	int rc =
	    rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &arg, (xdrproc_t)xdr_u_int, &res, NULL);

	if (!rc && res != arg + 1)
		return -EIO;
	return rc;
}

/* Wait (2 s at most) until the responder has counted @n notifications. */
static void wait_dones(uint32_t n)
{
	for (int i = 0; i < 200 && atomic_load(&fp.dones) < n; i++)
		usleep(10000);
}

static void mode_notify(void)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c;
	int rc;

	/* Version One, reliable replies not configured */
	if (fp_start(&fp, 0, FP_RR)) {
		XT_CHECK(0);
		return;
	}
	c = client(RPCRDMA_VERSION_1, 8, false);
	for (u_int i = 0; c && i < 20; i++) {
		rc = call(c, 100 + i);
		if (rc)
			fprintf(stderr, "v1 call %u: %d (%s)\n", i, rc, rpcrdma_strerror(rc));
		XT_CHECK(rc == 0);
	}
	wait_dones(20);
	XT_CHECK(atomic_load(&fp.dones) == 20 && atomic_load(&fp.dones_ok) == 20);
	/* and one for an XID no call has (the draft: notified all the same) */
	atomic_store(&fp.mode, FP_RR_EXTRA);
	XT_CHECK(c && call(c, 7) == 0);
	wait_dones(22);
	XT_CHECK(atomic_load(&fp.dones) == 22 && atomic_load(&fp.dones_ok) == 22);
	XT_CHECK(c && rpcrdma_clnt_stats(c, &st) == 0 && st.rr_replies == 21 &&
		 st.rr_notifications == 22 && st.reconnects == 0);
	if (c)
		rpcrdma_clnt_destroy(c);
	fp_stop(&fp);

	/* Version Two, reliable replies not configured (not advertised) */
	if (fp_start(&fp, 0, FP_V2_RR)) {
		XT_CHECK(0);
		return;
	}
	c = client(RPCRDMA_VERSION_2, 8, false);
	for (u_int i = 0; c && i < 20; i++) {
		rc = call(c, 200 + i);
		if (rc)
			fprintf(stderr, "v2 call %u: %d (%s)\n", i, rc, rpcrdma_strerror(rc));
		XT_CHECK(rc == 0);
	}
	wait_dones(20);
	XT_CHECK(atomic_load(&fp.dones) == 20 && atomic_load(&fp.dones_ok) == 20);
	if (c)
		rpcrdma_clnt_destroy(c);
	fp_stop(&fp);
}

static atomic_int ndone, nbad;

struct acall {
	u_int arg, res;
};

static void cb(struct rpcrdma_clnt *c, int status, void *res, void *arg)
{
	struct acall *a = arg;

	(void)c;
	(void)res;
	if (status || a->res != a->arg + 1) {
		if (atomic_fetch_add(&nbad, 1) < 5)
			fprintf(stderr, "call %u: %d (%s) res %u\n", a->arg, status,
				rpcrdma_strerror(status), a->res);
	}
	atomic_fetch_add(&ndone, 1);
}

static void mode_strict(void)
{
	enum { N = 300, INFL = 3, GRANT = 4 };
	static struct acall a[N];
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c;

	if (fp_start(&fp, 0, FP_RR)) {
		XT_CHECK(0);
		return;
	}
	atomic_store(&fp.credit, GRANT);
	atomic_store(&fp.recvs, GRANT);
	atomic_store(&fp.strict, true);
	c = client(RPCRDMA_VERSION_1, 8, true);
	for (int i = 0; c && i < N; i++) {
		/* at most INFL calls of ours on the wire */
		for (int k = 0; k < 1000 && i - atomic_load(&ndone) >= INFL; k++)
			usleep(1000);
		a[i].arg = (u_int)i;
		XT_CHECK(rpcrdma_clnt_call_async(c, 1, (xdrproc_t)xdr_u_int, &a[i].arg,
						 (xdrproc_t)xdr_u_int, &a[i].res, NULL, cb,
						 &a[i]) == 0);
	}
	for (int k = 0; k < 1000 && atomic_load(&ndone) < N; k++)
		usleep(10000);
	XT_CHECK(atomic_load(&ndone) == N && atomic_load(&nbad) == 0);
	wait_dones(N);
	XT_CHECK(atomic_load(&fp.dones_ok) == N);
	XT_CHECK(atomic_load(&fp.conns) == 1);
	XT_CHECK(c && rpcrdma_clnt_stats(c, &st) == 0 && st.reconnects == 0 &&
		 st.max_outstanding <= GRANT);
	fprintf(stderr, "strict: %d calls, %d failed, %u notified, %u connections\n",
		atomic_load(&ndone), atomic_load(&nbad), atomic_load(&fp.dones_ok),
		atomic_load(&fp.conns));
	if (c)
		rpcrdma_clnt_destroy(c);
	fp_stop(&fp);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "notify";

	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(m, "notify"))
		mode_notify();
	else if (!strcmp(m, "strict"))
		mode_strict();
	else
		return 2;
	if (xt_failures) {
		fprintf(stderr, "%s: %d failures\n", m, xt_failures);
		return 1;
	}
	printf("%s: ok\n", m);
	return 0;
}
