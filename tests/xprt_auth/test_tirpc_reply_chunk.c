// SPDX-License-Identifier: MIT
/*
 * The TI-RPC CLIENT adapter offers a Reply chunk (RFC 8166 §3.5.3.2, Long
 * Reply; §3.4.7 Reply chunk), so an rpcgen procedure whose reply exceeds
 * the inline threshold (1024 bytes here) works through clnt_call():
 *   - BIG returning 300,000 and 1 MiB (the default Reply chunk,
 *     RPCRDMA_TIRPC_REPLY_SIZE, takes a 1 MiB result) plain opaque<>
 *     bytes: the generated big_1() succeeds and the bytes' checksum matches
 *     what the server filled; each reply came by the Reply chunk
 *     (RDMA_NOMSG, counted as a long reply);
 *   - a 100-byte result still comes inline (nothing written into the
 *     Reply chunk);
 *   - a 2 MiB result does not fit: the server answers RDMA_ERROR
 *     ERR_CHUNK (RFC 8166 §4.5.2) and clnt_call() returns RPC_CANTRECV
 *     with re_errno EREMOTEIO, as client.h documents; the CLIENT works on
 *     afterwards;
 *   - a client made with tirpc_reply_size 0 offers no Reply chunk: the
 *     300,000-byte reply then fails the same way.
 * Before the fix the adapter offered no Reply chunk and the 300,000-byte
 * call failed (RDMA_ERROR ERR_CHUNK, RPC_FAILED).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xprt_auth/authx_test.h"

#define RFC "RFC 8166 §3.5.3.2"

static void big_ok(CLIENT *cl, struct rpcrdma_clnt *c, u_int len, u_int seed)
{
	big_args a = {len, seed};
	struct rpcrdma_xprt_stats s0, s1;
	bigdata *b;
	uint8_t *want = malloc(len);

	XT_CHECK(want != NULL && rpcrdma_clnt_stats(c, &s0) == 0);
	b = big_1(&a, cl);
	XT_CHECK(b != NULL);
	if (!b) {
		fprintf(stderr, "  " RFC ": %u-byte reply: %s\n", len, clnt_sperror(cl, "big_1"));
	} else if (want) {
		ax_big_fill(want, len, seed);
		XT_CHECK(b->bigdata_len == len);
		XT_CHECK(b->bigdata_len == len &&
			 tl_hash(b->bigdata_val, len) == tl_hash(want, len));
		clnt_freeres(cl, (xdrproc_t)xdr_bigdata, (char *)b);
	}
	XT_CHECK(rpcrdma_clnt_stats(c, &s1) == 0);
	/* The reply travelled in the Reply chunk we offered. */
	XT_CHECK(s1.reply_chunks == s0.reply_chunks + 1);
	XT_CHECK(s1.reply_bytes >= s0.reply_bytes + len);
	free(want);
}

static void big_too_large(CLIENT *cl, u_int len)
{
	big_args a = {len, 3};
	bigdata out;
	struct rpc_err e;
	struct timeval tv = {10, 0};
	enum clnt_stat st;

	memset(&out, 0, sizeof(out));
	st = clnt_call(cl, BIG, (xdrproc_t)xdr_big_args, (char *)&a, (xdrproc_t)xdr_bigdata,
		       (char *)&out, tv);
	clnt_geterr(cl, &e);
	XT_CHECK(st == RPC_CANTRECV);
	XT_CHECK(e.re_status == RPC_CANTRECV && e.re_errno == EREMOTEIO);
	if (st != RPC_CANTRECV || e.re_errno != EREMOTEIO)
		fprintf(stderr,
			"  " RFC ": %u-byte reply: clnt_stat %d errno %d, expected "
			"RPC_CANTRECV/EREMOTEIO\n",
			len, (int)st, e.re_errno);
	xdr_free((xdrproc_t)xdr_bigdata, (char *)&out);
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c, *c0;
	struct rpcrdma_clnt_opts o = {.comp_mask = RPCRDMA_CLNT_OPT_TIRPC_REPLY,
				      .tirpc_reply_size = 0};
	CLIENT *cl, *cl0;

	signal(SIGPIPE, SIG_IGN);
	if (ax_server_start(&srv))
		return 1;
	if (rpcrdma_clnt_create("127.0.0.1", srv.port, AUTHX_PROG, AUTHX_V1, NULL, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	cl = rpcrdma_clnt_tirpc(c);
	XT_CHECK(cl != NULL);
	big_ok(cl, c, 300000, 1);
	big_ok(cl, c, 1u << 20, 2);
	big_too_large(cl, 2u << 20);
	/* A reply that fits inline still comes inline (RFC 8166 §3.5.1):
	 * nothing is written into the Reply chunk offered. */
	{
		big_args a = {100, 5};
		struct rpcrdma_xprt_stats s0, s1;
		bigdata *b;

		XT_CHECK(rpcrdma_clnt_stats(c, &s0) == 0);
		b = big_1(&a, cl);
		XT_CHECK(b != NULL && b->bigdata_len == 100);
		if (b)
			clnt_freeres(cl, (xdrproc_t)xdr_bigdata, (char *)b);
		XT_CHECK(rpcrdma_clnt_stats(c, &s1) == 0);
		XT_CHECK(s1.reply_bytes == s0.reply_bytes && s1.replies == s0.replies + 1);
	}
	/* Small replies still come inline, and the CLIENT goes on working. */
	{
		struct rpcrdma_xprt_stats s0, s1;

		XT_CHECK(rpcrdma_clnt_stats(c, &s0) == 0);
		big_ok(cl, c, 300001, 4);
		XT_CHECK(rpcrdma_clnt_stats(c, &s1) == 0);
		XT_CHECK(s1.err_chunk_rx == s0.err_chunk_rx);
	}
	clnt_destroy(cl);

	/* tirpc_reply_size 0: no Reply chunk, so a long reply cannot come. */
	XT_CHECK(rpcrdma_clnt_create("127.0.0.1", srv.port, AUTHX_PROG, AUTHX_V1, &o, &c0) == 0);
	cl0 = rpcrdma_clnt_tirpc(c0);
	XT_CHECK(cl0 != NULL);
	big_too_large(cl0, 300000);
	clnt_destroy(cl0);
	rpcrdma_clnt_destroy(c0);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
