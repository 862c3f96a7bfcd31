/* SPDX-License-Identifier: MIT */
/*
 * src/transport/short.c against the general decoders (issue 13, found by
 * fuzz/fuzz_short.c): the word-by-word call parser took a call of any
 * rpcvers as the common case and filled prog/vers/proc from words that
 * RFC 5531 §9 defines only for rpcvers 2, where rpcrdma_rpc_decode_call()
 * stops after rpcvers (so the server answers RPC_MISMATCH). Now:
 *   - an AUTH_NONE call with rpcvers 3 (or 1, or 0) is not the common
 *     case: xprt_short_call_parse() returns false and the general decoder
 *     gives xid + rpcvers only, its cursor after rpcvers;
 *   - an rpcvers 2 AUTH_NONE call still is, with the same fields as the
 *     general decoder and its cursor at XPRT_SHORT_CALL;
 *   - the transport header and reply shortcuts agree with the general
 *     decoders on a Short RDMA_MSG, an accepted SUCCESS reply, and the
 *     near misses (one word changed).
 */
#include <stdio.h>
#include <string.h>

#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"
#include "transport/xprt.h"

#include "lib/check.h"
#include "util/be.h"

static void calls(void)
{
	const uint32_t vers[] = {0, 1, 3, 0xffffffffu};
	uint8_t m[48];
	struct rpcrdma_rpc_call s, g;
	struct rpcrdma_xdr x;

	/* rpcvers 2, AUTH_NONE: the common case, as the general decoder */
	xprt_short_call_hdr(m, 0x11223344u, 100003, 3, 6);
	put_be32(m + 40, 99);
	memset(&s, 0, sizeof(s));
	CHECK(xprt_short_call_parse(m, sizeof(m), &s));
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_decode_call(&x, &g) == 0);
	CHECK(rpcrdma_xdr_getpos(&x) == XPRT_SHORT_CALL);
	CHECK(s.xid == g.xid && s.rpcvers == 2 && g.rpcvers == 2 && s.prog == g.prog &&
	      s.vers == g.vers && s.proc == g.proc && g.proc == 6);
	CHECK(s.cred.flavor == g.cred.flavor && s.cred.len == 0 && g.cred.len == 0);

	for (size_t i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		put_be32(m + 8, vers[i]);
		memset(&s, 0, sizeof(s));
		if (xprt_short_call_parse(m, sizeof(m), &s))
			fprintf(stderr,
				"RFC 5531 §9: rpcvers %u call taken as the common case "
				"(prog %u vers %u proc %u)\n",
				vers[i], s.prog, s.vers, s.proc);
		CHECK(!xprt_short_call_parse(m, sizeof(m), &s));
		rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
		CHECK(rpcrdma_rpc_decode_call(&x, &g) == 0);
		CHECK(g.rpcvers == vers[i] && g.prog == 0 && g.vers == 0 && g.proc == 0);
		CHECK(rpcrdma_xdr_getpos(&x) == 12);
	}
}

static void headers(void)
{
	uint8_t b[32];
	struct rpcrdma1_hdr s, g;

	xprt_short_rdma_msg(b, 7, 32);
	put_be32(b + 28, 0);
	CHECK(xprt_short_decode_hdr(b, sizeof(b), &s));
	CHECK(rpcrdma1_decode_buf(b, sizeof(b), &g) == 0);
	CHECK(s.xid == g.xid && s.credit == g.credit && s.proc == g.proc && s.vers == g.vers &&
	      s.hdr_len == g.hdr_len && g.hdr_len == XPRT_SHORT_HDR);
	/* one word changed at a time: version, proc, each list */
	for (int w = 1; w < 7; w++) {
		if (w == 2)
			continue; /* the credit is any value */
		xprt_short_rdma_msg(b, 7, 32);
		put_be32(b + 4 * w, w == 1 ? 2 : 1);
		CHECK(!xprt_short_decode_hdr(b, sizeof(b), &s));
	}
	xprt_short_rdma_msg(b, 7, 32);
	CHECK(!xprt_short_decode_hdr(b, XPRT_SHORT_HDR - 1, &s));
}

static void replies(void)
{
	uint8_t m[28];
	struct rpcrdma_rpc_reply g;
	struct rpcrdma_xdr x;

	xprt_short_reply_hdr(m, 9);
	put_be32(m + 24, 1);
	CHECK(xprt_short_reply_ok(m, sizeof(m), 9));
	CHECK(!xprt_short_reply_ok(m, sizeof(m), 8));
	rpcrdma_xdr_init(&x, m, sizeof(m), RPCRDMA_XDR_DECODE);
	CHECK(rpcrdma_rpc_decode_reply(&x, &g) == 0 && g.xid == 9 &&
	      g.reply_stat == RPCRDMA_RPC_MSG_ACCEPTED && g.accept_stat == RPCRDMA_RPC_SUCCESS);
	CHECK(rpcrdma_xdr_getpos(&x) == XPRT_SHORT_REPLY);
	put_be32(m + 20, RPCRDMA_RPC_GARBAGE_ARGS);
	CHECK(!xprt_short_reply_ok(m, sizeof(m), 9));
	CHECK(!xprt_short_reply_ok(m, XPRT_SHORT_REPLY - 1, 9));
}

int main(void)
{
	calls();
	headers();
	replies();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
