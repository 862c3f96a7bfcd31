// SPDX-License-Identifier: MIT
/*
 * Version One inline thresholds by default (issue 32): our client and
 * server advertise 4096 bytes in RFC 8797 private data, as Linux does,
 * and assume 1024 of a peer that sends none (RFC 8797 §4.1):
 *   both with private data (the defaults)     4096 / 4096 on both sides,
 *                                             a 3 KiB echo both ways
 *                                             inline (no chunk)
 *   client without private data               1024 / 1024 on both sides
 *   server accepting without private data     1024 / 1024 on both sides
 * (the side that sent none assumes 1024 too, whatever the peer sent).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

static void check(const struct rpcrdma_svc_opts *so, int clnt_pdata, uint32_t want)
{
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_PRIVATE_DATA,
				      .private_data = clnt_pdata};
	struct rpcrdma_clnt *c = NULL;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_call_result r;
	struct tl_server srv;
	u_int len = 3000;
	struct xt_opaque a = {malloc(len), len}, res = {NULL, 0};
	struct rpcrdma_call_opts co = {.comp_mask =
					   RPCRDMA_CALL_OPT_RESULT | RPCRDMA_CALL_OPT_REPLY_SIZE,
				       .result = &r,
				       .reply_size = 24 + 4 + 3000};

	if (xt_server_start(&srv, so, NULL)) {
		XT_CHECK(0);
		free(a.val);
		return;
	}
	XT_CHECK(rpcrdma_clnt_create(tl_addr(), srv.port, XTEST_PROG, XTEST_VERS, &o, &c) == 0);
	if (c) {
		xt_fill(a.val, len, 7);
		memset(&r, 0, sizeof(r));
		XT_CHECK(rpcrdma_clnt_call(c, XT_ECHO, (xdrproc_t)xdr_xt_opaque, &a,
					   (xdrproc_t)xdr_xt_opaque, &res, &co) == 0);
		XT_CHECK(res.len == len && res.val && memcmp(res.val, a.val, len) == 0);
		XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
		if (st.inline_send != want || st.inline_recv != want)
			fprintf(stderr, "client pdata %d, server pdata %d: inline %u/%u, want %u\n",
				clnt_pdata, so ? 0 : 1, st.inline_send, st.inline_recv, want);
		XT_CHECK(st.inline_send == want && st.inline_recv == want);
		/* 3 KiB each way: inline at 4096 (RDMA_MSG, no chunk), a Long
		 * Call and a Reply chunk at 1024 */
		XT_CHECK(want == 4096 ? (r.call_proc == 0 && r.reply_proc == 0 && !r.reply_chunk)
				      : (r.call_proc == 1 && r.reply_chunk && r.reply_proc == 1));
		/* the server agrees: a 3 KiB reply inline means it took 4096 */
		XT_CHECK(want != 4096 || st.reply_chunks == 0);
		xdr_free((xdrproc_t)xdr_xt_opaque, (char *)&res);
		rpcrdma_clnt_destroy(c);
	}
	free(a.val);
	XT_CHECK(xt_server_stop(&srv) == 0);
}

int main(void)
{
	struct rpcrdma_svc_opts nopd = {.comp_mask = RPCRDMA_SVC_OPT_PRIVATE_DATA,
					.private_data = 0};

	signal(SIGPIPE, SIG_IGN);
	check(NULL, 1, 4096);
	check(NULL, 0, 1024);
	check(&nopd, 1, 1024);
	return xt_result();
}
