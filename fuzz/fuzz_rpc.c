/* SPDX-License-Identifier: MIT */
/*
 * Fuzz the ONC RPC header decoders (RFC 5531). Input: one control byte,
 * then the message. Control bits 0-1 pick the decoder (0 call, 1 reply,
 * 2 by msg_type via rpcrdma_rpc_peek, 3 an AUTH_SYS body); bits 2-7, when
 * non-zero, cut the message into pieces of that many bytes, each its own
 * heap block so ASan sees any access past a piece.
 *
 * Properties: a failed decode leaves the cursor where it was; a successful
 * one re-encodes, and the re-encoding decodes to the same value; the
 * admission check's reply always encodes and decodes back. And libtirpc
 * agrees (rpc_tirpc.h): its xdr_callmsg, xdr_replymsg and
 * xdr_authunix_parms take the message (the bytes after the control byte,
 * flat) exactly when ours does, except by the rules written out there,
 * and give the same fields.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"
#include "rpc_tirpc.h"
#include "fuzz_assert.h"
#include "fuzz_pieces.h"

/* @data in heap pieces of @piece bytes (the last takes the rest), and a
 * decoding cursor over them. */
static int make_cursor(struct rpcrdma_xdr *x, struct pieces *p, const uint8_t *data, size_t size,
		       size_t piece)
{
	if (make_pieces(p, data, size, piece) != 0)
		return -1;
	return rpcrdma_xdr_init_iov(x, p->iov, p->n, RPCRDMA_XDR_DECODE);
}

static uint8_t out[2048];

/* A disagreement with libtirpc: say which before the crash. */
static void agree(const char *why)
{
	if (why) {
		fprintf(stderr, "src/rpc and libtirpc disagree: %s\n", why);
		__builtin_trap();
	}
}

static void check_call(struct rpcrdma_xdr *x)
{
	struct rpcrdma_rpc_call c, d;
	struct rpcrdma_xdr e;
	size_t pos = rpcrdma_xdr_getpos(x);

	if (rpcrdma_rpc_decode_call(x, &c) != 0) {
		ASSERT(rpcrdma_xdr_getpos(x) == pos);
		/* What the server answers a header it cannot decode: an
		 * oversize opaque_auth is AUTH_BADCRED / AUTH_BADVERF. */
		struct rpcrdma_rpc_reply o;
		if (rpcrdma_rpc_oversize_auth(x, &o) == 1)
			ASSERT(o.reply_stat == RPCRDMA_RPC_MSG_DENIED &&
			       (o.auth_stat == RPCRDMA_RPC_AUTH_BADCRED ||
				o.auth_stat == RPCRDMA_RPC_AUTH_BADVERF));
		ASSERT(rpcrdma_xdr_getpos(x) == pos);
		return;
	}
	/* A decodable call never looks oversize. */
	{
		struct rpcrdma_rpc_reply o;
		struct rpcrdma_xdr y = *x;

		rpcrdma_xdr_setpos(&y, pos);
		ASSERT(rpcrdma_rpc_oversize_auth(&y, &o) == 0);
	}
	rpcrdma_xdr_init(&e, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	ASSERT(rpcrdma_rpc_encode_call(&e, &c) == 0);
	size_t n = rpcrdma_xdr_getpos(&e);
	rpcrdma_xdr_init(&e, out, n, RPCRDMA_XDR_DECODE);
	ASSERT(rpcrdma_rpc_decode_call(&e, &d) == 0);
	ASSERT(memcmp(&c, &d, sizeof(c)) == 0);
	/* a v2 call is re-encoded whole; other versions stop after rpcvers */
	if (c.rpcvers == RPCRDMA_RPC_VERS)
		ASSERT(rpcrdma_xdr_remaining(&e) == 0);

	struct rpcrdma_rpc_reply r, rd;
	int v = rpcrdma_rpc_check_call(&c, RPCRDMA_RPC_FLAVORS_DEFAULT, &r);
	ASSERT(v == 0 || v == 1);
	if (v == 1) {
		rpcrdma_xdr_init(&e, out, sizeof(out), RPCRDMA_XDR_ENCODE);
		ASSERT(rpcrdma_rpc_encode_reply(&e, &r) == 0);
		n = rpcrdma_xdr_getpos(&e);
		rpcrdma_xdr_init(&e, out, n, RPCRDMA_XDR_DECODE);
		ASSERT(rpcrdma_rpc_decode_reply(&e, &rd) == 0);
		ASSERT(memcmp(&r, &rd, sizeof(r)) == 0 && rd.xid == c.xid);
	}
	struct rpcrdma_rpc_authsys s, s2;
	struct rpcrdma_rpc_auth a;
	if (rpcrdma_rpc_auth_get_sys(&c.cred, &s) == 0) {
		ASSERT(v == 1 || c.verf.flavor == RPCRDMA_RPC_AUTH_NONE);
		ASSERT(rpcrdma_rpc_auth_sys(&a, &s) == 0);
		ASSERT(rpcrdma_rpc_auth_get_sys(&a, &s2) == 0);
		ASSERT(memcmp(&s, &s2, sizeof(s)) == 0);
	}
}

static void check_reply(struct rpcrdma_xdr *x)
{
	struct rpcrdma_rpc_reply r, d;
	struct rpcrdma_xdr e;
	size_t pos = rpcrdma_xdr_getpos(x);

	if (rpcrdma_rpc_decode_reply(x, &r) != 0) {
		ASSERT(rpcrdma_xdr_getpos(x) == pos);
		return;
	}
	rpcrdma_xdr_init(&e, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	ASSERT(rpcrdma_rpc_encode_reply(&e, &r) == 0);
	size_t n = rpcrdma_xdr_getpos(&e);
	ASSERT(n == rpcrdma_xdr_getpos(x) - pos);
	rpcrdma_xdr_init(&e, out, n, RPCRDMA_XDR_DECODE);
	ASSERT(rpcrdma_rpc_decode_reply(&e, &d) == 0);
	ASSERT(memcmp(&r, &d, sizeof(r)) == 0 && rpcrdma_xdr_remaining(&e) == 0);
	(void)rpcrdma_rpc_accept_stat_name(r.accept_stat);
	(void)rpcrdma_rpc_auth_stat_name(r.auth_stat);
}

static void check_authsys(struct rpcrdma_xdr *x)
{
	struct rpcrdma_rpc_authsys s, d;
	struct rpcrdma_xdr e;
	size_t pos = rpcrdma_xdr_getpos(x);

	if (rpcrdma_rpc_decode_authsys(x, &s) != 0) {
		ASSERT(rpcrdma_xdr_getpos(x) == pos);
		return;
	}
	rpcrdma_xdr_init(&e, out, sizeof(out), RPCRDMA_XDR_ENCODE);
	ASSERT(rpcrdma_rpc_encode_authsys(&e, &s) == 0);
	size_t n = rpcrdma_xdr_getpos(&e);
	rpcrdma_xdr_init(&e, out, n, RPCRDMA_XDR_DECODE);
	ASSERT(rpcrdma_rpc_decode_authsys(&e, &d) == 0);
	ASSERT(memcmp(&s, &d, sizeof(s)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_xdr x;
	struct pieces p;

	if (size < 1)
		return 0;
	unsigned mode = data[0] & 3u;
	size_t piece = data[0] >> 2;
	if (make_cursor(&x, &p, data + 1, size - 1, piece) != 0) {
		free_pieces(&p);
		return 0;
	}
	if (mode == 2) {
		uint32_t xid, type;
		if (rpcrdma_rpc_peek(&x, &xid, &type) == 0)
			mode = type == RPCRDMA_RPC_CALL ? 0 : 1;
		ASSERT(rpcrdma_xdr_getpos(&x) == 0);
	}
	switch (mode) {
	case 0:
		check_call(&x);
		agree(rt_cmp_call(data + 1, size - 1));
		break;
	case 1:
		check_reply(&x);
		agree(rt_cmp_reply(data + 1, size - 1));
		break;
	case 3:
		check_authsys(&x);
		agree(rt_cmp_authsys(data + 1, size - 1));
		break;
	default:
		break;
	}
	free_pieces(&p);
	return 0;
}
