// SPDX-License-Identifier: MIT
/*
 * The Reply-chunk decision counts the reply's transport header (issue 32,
 * RFC 8166 §3.5.3.2): a responder sends header + reply in one message,
 * so a reply whose size is known goes inline only when header + reply
 * fit the inline threshold.
 *   Version One, a strict responder (fake_peer.c FP_FIT, as Linux's
 *   svcrdma: inline if 28 + N <= 1024, else the Reply chunk, else
 *   ERR_CHUNK): replies of N = 1024 - 28 + 4k bytes, k = -4..8; the
 *   client offers a Reply chunk exactly when 28 + N > 1024 (the peer
 *   counts the chunk lists it received) and every call succeeds with the
 *   reply's bytes intact.
 *   Version Two, our server: echo replies of N = inline - 32 + 4k bytes
 *   around the negotiated threshold all succeed (the server answers
 *   ERR_CHUNK when header + reply fit neither inline nor a Reply chunk).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/fake_peer.h"
#include "xprt/xprt_test.h"

static struct fake_peer fp;

/* FP_FIT's reply: opaque<> whose byte i is i & 0xff. */
struct fit_res {
	char *val;
	u_int len;
};

static bool_t xdr_fit_res(XDR *x, struct fit_res *r)
{
	return xdr_bytes(x, &r->val, &r->len, 8192);
}

static void v1_strict(void)
{
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_TIMEOUT, .timeout_ms = 5000};
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_xprt_stats st;

	if (fp_start(&fp, 0, FP_FIT)) {
		XT_CHECK(0);
		return;
	}
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", fp.port, XTEST_PROG, XTEST_VERS, &o, &c) == 0);
	for (int k = -4; c && k <= 8; k++) {
		u_int n = 1024 - 28 + 4 * (u_int)k;
		struct rpcrdma_call_opts co = {.comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE,
					       .reply_size = n};
		struct fit_res r = {NULL, 0};
		uint32_t before = atomic_load(&fp.reply_chunks);
		bool want = 28 + n > 1024;
		int rc = rpcrdma_clnt_call(c, 1, (xdrproc_t)xdr_u_int, &n, (xdrproc_t)xdr_fit_res,
					   &r, &co);
		bool offered = atomic_load(&fp.reply_chunks) != before;

		if (rc || offered != want)
			fprintf(stderr, "reply of %u bytes: %s, Reply chunk %s\n", n,
				rpcrdma_strerror(rc), offered ? "offered" : "not offered");
		XT_CHECK(rc == 0);
		XT_CHECK(offered == want);
		XT_CHECK(rc || r.len == n - 28);
		for (u_int i = 0; !rc && i < r.len; i++)
			if ((uint8_t)r.val[i] != (uint8_t)(i & 0xff)) {
				XT_CHECK(!"reply bytes");
				break;
			}
		free(r.val);
	}
	XT_CHECK(atomic_load(&fp.err_chunks) == 0);
	if (c) {
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.inline_recv == 1024 &&
			 st.err_chunk_rx == 0);
		rpcrdma_clnt_destroy(c);
	}
	fp_stop(&fp);
}

static void v2_ours(void)
{
	struct rpcrdma_svc_opts so = {.comp_mask = RPCRDMA_SVC_OPT_RDMA_VERSION,
				      .rdma_version = RPCRDMA_VERSION_2,
				      .rdma_props = 1};
	struct rpcrdma_clnt_opts o = {.comp_mask =
					  RPCRDMA_CLNT_OPT_RDMA_VERSION | RPCRDMA_CLNT_OPT_TIMEOUT,
				      .rdma_version = RPCRDMA_VERSION_2,
				      .rdma_props = 1,
				      .timeout_ms = 5000};
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_xprt_stats st;
	struct tl_server srv;
	uint32_t thr;

	if (xt_server_start(&srv, &so, NULL)) {
		XT_CHECK(0);
		return;
	}
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, &o, &c) == 0);
	if (c)
		XT_CHECK(rpcrdma_clnt_call(c, XT_NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	XT_CHECK(c && rpcrdma_clnt_stats(c, &st) == 0 && st.inline_recv >= 1024);
	thr = c ? st.inline_recv : 0;
	for (int k = -4; c && k <= 8; k++) {
		/* the reply: RPC header (24), opaque<len> */
		u_int n = thr - 32 + 4 * (u_int)k, len = n - 28;
		struct rpcrdma_call_opts co = {.comp_mask = RPCRDMA_CALL_OPT_REPLY_SIZE,
					       .reply_size = n};
		struct xt_opaque a = {malloc(len), len}, r = {NULL, 0};
		int rc;

		xt_fill(a.val, len, 100 + (uint32_t)k);
		rc = rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
				       (xdrproc_t)xdr_xt_opaque, &r, &co);
		if (rc)
			fprintf(stderr, "v2: reply of %u bytes (threshold %u): %s\n", n, thr,
				rpcrdma_strerror(rc));
		XT_CHECK(rc == 0);
		XT_CHECK(rc || (r.len == len && xt_hash(r.val, len) == xt_hash(a.val, len)));
		free(a.val);
		free(r.val);
	}
	if (c) {
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0 && st.err_chunk_rx == 0);
		rpcrdma_clnt_destroy(c);
	}
	XT_CHECK(xt_server_stop(&srv) == 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	v1_strict();
	v2_ours();
	return xt_result();
}
