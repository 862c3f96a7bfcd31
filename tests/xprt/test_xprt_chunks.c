// SPDX-License-Identifier: MIT
/*
 * Chunk shapes end to end, two processes over loopback (softiwarp), with
 * checksums of every byte that crossed (issue 13, defects 2 and 3):
 *   RFC 8166 §3.4.6 + §3.5.3.2  a reply whose result data goes by Write
 *     chunk and whose rest does not fit inline: the server answers
 *     RDMA_NOMSG with the Write list filled and the rest in the Reply
 *     chunk (what Linux svc_rdma_sendto sends whenever a Reply chunk was
 *     offered); the client places the data and decodes the rest from the
 *     Reply chunk. And RDMA_MSG with a filled Write list + inline rest.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xprt/xprt_test.h"

/* Check @n items of @len bytes (seed + i) and a tail of @tail bytes. */
static bool readn_ok(const struct xt_readn_res *res, uint8_t *const *bufs, uint32_t n,
		     uint32_t len, uint32_t seed, uint32_t tail)
{
	uint8_t *exp = malloc((size_t)(len > tail ? len : tail) + 1);
	bool ok = res->n == n && res->tail.len == tail;

	for (uint32_t i = 0; ok && i < n; i++) {
		xt_fill(exp, len, seed + i);
		ok = res->b[i].len == len && xt_hash(res->b[i].base, len) == xt_hash(exp, len) &&
		     (!bufs || res->b[i].base == bufs[i]);
	}
	if (ok) {
		xt_fill(exp, tail, seed ^ 0x5a5au);
		ok = xt_hash(res->tail.val, tail) == xt_hash(exp, tail);
	}
	free(exp);
	return ok;
}

/* Defect 2: Write list + Reply chunk in one reply (RFC 8166 §3.4.6,
 * §3.5.3.2), and Write list + inline rest (RDMA_MSG). */
static void t_wlist_and_reply_chunk(struct rpcrdma_clnt *c, uint32_t tail, uint32_t want_proc)
{
	const uint32_t len = 65536, seed = 7;
	struct xt_readn_args a = {1, len, seed, tail};
	struct xt_readn_res res;
	struct rpcrdma_call_result r;
	struct rpcrdma_call_opts o = {.comp_mask = RPCRDMA_CALL_OPT_RESULT |
						   RPCRDMA_CALL_OPT_RECV_BULK |
						   RPCRDMA_CALL_OPT_REPLY_SIZE,
				      .result = &r,
				      .nrecv_bulk = 1,
				      .reply_size = 8192};
	uint8_t *dst = calloc(1, len);
	int rc;

	memset(&res, 0, sizeof(res));
	memset(&r, 0, sizeof(r));
	o.recv_bulk[0].base = dst;
	o.recv_bulk[0].len = len;
	rc = rpcrdma_clnt_call(c, XT_READN, (xdrproc_t)xdr_xt_readn_args, &a,
			       (xdrproc_t)xdr_xt_readn_res, &res, &o);
	if (rc || r.reply_proc != want_proc) {
		fprintf(stderr,
			"RFC 8166 §3.4.6/§3.5.3.2: Write list + %s (tail %u): call %d (%s), "
			"reply_proc %u, want 0 and %u\n",
			want_proc ? "Reply chunk (RDMA_NOMSG)" : "inline rest (RDMA_MSG)", tail, rc,
			rpcrdma_strerror(rc), r.reply_proc, want_proc);
		xt_failures++;
	}
	XT_CHECK(rc == 0 && r.write_chunks == 1 && r.reply_chunk == 1 &&
		 r.recv_bulk_len[0] == len);
	XT_CHECK(rc == 0 && readn_ok(&res, &dst, 1, len, seed, tail));
	xdr_free((xdrproc_t)xdr_xt_readn_res, (char *)&res);
	free(dst);
}

int main(void)
{
	struct tl_server srv;
	struct rpcrdma_clnt *c;
	struct rpcrdma_xprt_stats st;

	signal(SIGPIPE, SIG_IGN);
	if (xt_server_start(&srv, NULL, NULL))
		return 1;
	if (rpcrdma_clnt_create("127.0.0.1", srv.port, XTEST_PROG, XTEST_VERS, NULL, &c)) {
		xt_server_stop(&srv);
		return 1;
	}
	t_wlist_and_reply_chunk(c, 3000, 1); /* RDMA_NOMSG: rest in the Reply chunk */
	t_wlist_and_reply_chunk(c, 100, 0);  /* RDMA_MSG: rest inline */
	XT_CHECK(rpcrdma_clnt_stats(c, &st) == 0);
	XT_CHECK(st.bad_headers == 0 && st.decode_errors == 0 && st.long_replies == 1);
	rpcrdma_clnt_destroy(c);
	XT_CHECK(xt_server_stop(&srv) == 0);
	return xt_result();
}
