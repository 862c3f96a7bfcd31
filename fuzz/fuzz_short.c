/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the word-by-word decoders of src/transport/short.c against
 * the general decoders they stand in for (issue 13: a second decoder of the
 * same header must agree with the first on every input). short.c may only
 * ever say "the common case" or "not the common case"; so for any input:
 *   - transport header (RFC 8166 §4.2): xprt_short_decode_hdr() accepts
 *     exactly when rpcrdma1_decode_buf() decodes an RDMA_MSG of version 1
 *     with three empty lists, and then fills the same xid, vers, credit,
 *     proc and header length (28) with no chunks;
 *   - RPC call header (RFC 5531 §9): xprt_short_call_parse() accepts
 *     exactly when rpcrdma_rpc_decode_call() decodes an rpcvers 2 call
 *     with empty AUTH_NONE credential and verifier, and then gives the same
 *     xid, rpcvers, prog, vers, proc, flavors and lengths, with the general
 *     decoder's cursor at XPRT_SHORT_CALL;
 *   - RPC reply header: xprt_short_reply_ok(xid) accepts exactly when
 *     rpcrdma_rpc_decode_reply() decodes an accepted SUCCESS reply to xid
 *     with an empty AUTH_NONE verifier, its cursor at XPRT_SHORT_REPLY.
 * Each is tried on the input itself, on what follows a 28-byte header (the
 * RPC message of a Short message), and the reply with the input's first
 * word and another XID. Any disagreement stops the run (ASSERT).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_assert.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"
#include "transport/rpcrdma1_hdr.h"
#include "transport/xprt.h"
#include "util/be.h"

static void check_hdr(const uint8_t *p, size_t n)
{
	struct rpcrdma1_hdr s, m;
	bool ok_s = xprt_short_decode_hdr(p, n, &s);
	int rc = rpcrdma1_decode_buf(p, n, &m);
	const struct rpcrdma1_chunks *c = &m.chunks;
	bool ok_m = rc == 0 && m.vers == RPCRDMA1_VERSION && m.proc == RPCRDMA1_MSG &&
		    c->nreads == 0 && c->nwrites == 0 && !c->reply_present && c->nreply == 0;

	ASSERT(ok_s == ok_m);
	if (!ok_s)
		return;
	ASSERT(s.xid == m.xid && s.vers == m.vers && s.credit == m.credit && s.proc == m.proc);
	ASSERT(s.hdr_len == m.hdr_len && s.hdr_len == XPRT_SHORT_HDR);
	ASSERT(s.chunks.nreads == 0 && s.chunks.nwrites == 0 && s.chunks.nwsegs == 0 &&
	       s.chunks.nreply == 0 && !s.chunks.reply_present);
}

static bool auth_empty_none(const struct rpcrdma_rpc_auth *a)
{
	return a->flavor == RPCRDMA_RPC_AUTH_NONE && a->len == 0;
}

static void check_call(const uint8_t *p, size_t n)
{
	struct rpcrdma_rpc_call s, m;
	struct rpcrdma_xdr x;
	bool ok_s, ok_m;

	memset(&s, 0, sizeof(s));
	ok_s = xprt_short_call_parse(p, n, &s);
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)p, n, RPCRDMA_XDR_DECODE);
	ok_m = rpcrdma_rpc_decode_call(&x, &m) == 0 && m.rpcvers == RPCRDMA_RPC_VERS &&
	       auth_empty_none(&m.cred) && auth_empty_none(&m.verf);
	ASSERT(ok_s == ok_m);
	if (!ok_s)
		return;
	ASSERT(rpcrdma_xdr_getpos(&x) == XPRT_SHORT_CALL);
	ASSERT(s.xid == m.xid && s.rpcvers == m.rpcvers && s.prog == m.prog && s.vers == m.vers &&
	       s.proc == m.proc);
	ASSERT(auth_empty_none(&s.cred) && auth_empty_none(&s.verf));
}

static void check_reply(const uint8_t *p, size_t n, uint32_t xid)
{
	struct rpcrdma_rpc_reply m;
	struct rpcrdma_xdr x;
	bool ok_s = xprt_short_reply_ok(p, n, xid), ok_m;

	rpcrdma_xdr_init(&x, (void *)(uintptr_t)p, n, RPCRDMA_XDR_DECODE);
	ok_m = rpcrdma_rpc_decode_reply(&x, &m) == 0 && m.xid == xid &&
	       m.reply_stat == RPCRDMA_RPC_MSG_ACCEPTED && auth_empty_none(&m.verf) &&
	       m.accept_stat == RPCRDMA_RPC_SUCCESS;
	ASSERT(ok_s == ok_m);
	if (ok_s)
		ASSERT(rpcrdma_xdr_getpos(&x) == XPRT_SHORT_REPLY);
}

static void check_msg(const uint8_t *p, size_t n)
{
	uint32_t xid = 0;

	if (n >= 4)
		xid = get_be32(p);
	check_call(p, n);
	check_reply(p, n, xid);
	check_reply(p, n, xid ^ 1u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_hdr(data, size);
	check_msg(data, size);
	if (size >= XPRT_SHORT_HDR)
		check_msg(data + XPRT_SHORT_HDR, size - XPRT_SHORT_HDR);
	return 0;
}
