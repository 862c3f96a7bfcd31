// SPDX-License-Identifier: MIT
/*
 * The Version Two requester against a misbehaving responder (fake_peer.c,
 * the provider API in a thread; the early draft, docs/rpcrdma2.md):
 *   a Version Two reply                        the call succeeds
 *   RDMA2_OPTIONAL in place of the reply       dropped (a bad header), the
 *                                              call waits for its reply
 *   RDMA2_ERROR with an unknown errcode        the call fails -EBADMSG
 *   a reply whose rdma_direction says CALL     the call fails -EBADMSG (§4.2.2)
 *   a Version Two reply to no call, before
 *   the first call's reply (negotiating)       dropped as unmatched
 *   a Version One responder: `auto`            ERR_VERS, then the call in
 *                                              Version One succeeds
 *   a Version One responder: `2`               -EPROTONOSUPPORT, ERR_VERS 1..1
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "xprt/fake_peer.h"
#include "xprt/xprt_test.h"

static struct fake_peer fp;

static struct rpcrdma_clnt *client(enum rpcrdma_version_policy v)
{
	struct rpcrdma_clnt_opts o = {.comp_mask =
					  RPCRDMA_CLNT_OPT_RDMA_VERSION | RPCRDMA_CLNT_OPT_TIMEOUT,
				      .rdma_version = v,
				      .timeout_ms = 3000};
	struct rpcrdma_clnt *c = NULL;

	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", fp.port, XTEST_PROG, XTEST_VERS, &o, &c) == 0);
	return c;
}

/* Call 1 with @arg under mode @m: 0 and arg + 1, or the error. */
static int call(struct rpcrdma_clnt *c, int m, u_int arg, struct rpcrdma_call_result *r)
{
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT, .result = r};
	u_int res = 0;
	int rc;

	atomic_store(&fp.mode, m);
	memset(r, 0, sizeof(*r));
	rc = rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &arg, (xdrproc_t)xdr_u_int, &res, &o);
	if (!rc && res != arg + 1)
		return -EIO;
	return rc;
}

int main(void)
{
	struct rpcrdma_call_result r;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_clnt *c;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (fp_start(&fp, 0, FP_V2_OK))
		return 1;
	c = client(RPCRDMA_VERSION_2);
	if (c) {
		/* the first call: negotiation, with a stray reply first */
		XT_CHECK(call(c, FP_V2_EARLY, 1, &r) == 0);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.unmatched_replies == 1);
		XT_CHECK(call(c, FP_V2_OK, 2, &r) == 0);
		XT_CHECK(call(c, FP_V2_OPT, 3, &r) == 0);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.bad_headers == 1);
		rc = call(c, FP_V2_ERRX, 4, &r);
		if (rc != -EBADMSG)
			fprintf(stderr, "RDMA2_ERROR code 9: %d (%s)\n", rc, rpcrdma_strerror(rc));
		XT_CHECK(rc == -EBADMSG);
		rc = call(c, FP_V2_DIR, 5, &r);
		if (rc != -EBADMSG)
			fprintf(stderr, "reply in direction CALL: %d (%s)\n", rc,
				rpcrdma_strerror(rc));
		XT_CHECK(rc == -EBADMSG);
		XT_CHECK(call(c, FP_V2_OK, 6, &r) == 0);
		rpcrdma_clnt_destroy(c);
	}
	/* a Version One responder */
	c = client(RPCRDMA_VERSION_AUTO);
	if (c) {
		XT_CHECK(call(c, FP_OK, 7, &r) == 0 && r.transmissions == 2);
		XT_CHECK(call(c, FP_OK, 8, &r) == 0 && r.transmissions == 1);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.err_vers_rx == 1);
		rpcrdma_clnt_destroy(c);
	}
	c = client(RPCRDMA_VERSION_2);
	if (c) {
		XT_CHECK(call(c, FP_OK, 9, &r) == -EPROTONOSUPPORT);
		XT_CHECK(r.rdma_err == 1 && r.mismatch_low == 1 && r.mismatch_high == 1);
		rpcrdma_clnt_destroy(c);
	}
	fp_stop(&fp);
	return xt_result();
}
