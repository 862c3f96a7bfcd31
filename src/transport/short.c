// SPDX-License-Identifier: MIT
/*
 * The common case, word by word: a Short message (RFC 8166 §3.5.1: RDMA_MSG,
 * the whole RPC message inline, no chunks) carrying an RPC call or reply
 * with AUTH_NONE (RFC 5531 §9, §10.1). Most RPCs of every workload travel
 * like this, so the hot path writes and recognises these fixed headers
 * directly instead of going through the general codecs. Anything else
 * (chunk lists, other credentials, RPC errors, other versions) is left to
 * the general decoders, which remain the reference: these functions only
 * ever answer "not the common case", never "malformed".
 */
#include <string.h>

#include "transport/xprt.h"
#include "util/be.h"

void xprt_short_rdma_msg(uint8_t *p, uint32_t xid, uint32_t credit)
{
	/* RFC 8166 §4.2: xid, vers, credit, proc, then three empty lists. */
	put_be32(p, xid);
	put_be32(p + 4, RPCRDMA1_VERSION);
	put_be32(p + 8, credit);
	put_be32(p + 12, RPCRDMA1_MSG);
	put_be32(p + 16, 0);
	put_be32(p + 20, 0);
	put_be32(p + 24, 0);
}

bool xprt_short_decode_hdr(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h)
{
	if (len < XPRT_SHORT_HDR || get_be32(buf + 4) != RPCRDMA1_VERSION ||
	    get_be32(buf + 12) != RPCRDMA1_MSG || get_be32(buf + 16) || get_be32(buf + 20) ||
	    get_be32(buf + 24))
		return false;
	h->xid = get_be32(buf);
	h->vers = RPCRDMA1_VERSION;
	h->credit = get_be32(buf + 8);
	h->proc = RPCRDMA1_MSG;
	h->hdr_len = XPRT_SHORT_HDR;
	rpcrdma1_chunks_init(&h->chunks);
	return true;
}

void xprt_short_call_hdr(uint8_t *p, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	/* RFC 5531 §9: xid, CALL, rpcvers 2, prog, vers, proc, cred, verf. */
	put_be32(p, xid);
	put_be32(p + 4, RPCRDMA_RPC_CALL);
	put_be32(p + 8, RPCRDMA_RPC_VERS);
	put_be32(p + 12, prog);
	put_be32(p + 16, vers);
	put_be32(p + 20, proc);
	memset(p + 24, 0, 16); /* AUTH_NONE, length 0, twice */
}

bool xprt_short_call_parse(const uint8_t *msg, size_t len, struct rpcrdma_rpc_call *call)
{
	/* rpcvers 2 only: the rest of call_body is defined for it alone
	 * (RFC 5531 §9); other versions go to rpcrdma_rpc_decode_call(),
	 * which stops after rpcvers so RPC_MISMATCH is answered. */
	if (len < XPRT_SHORT_CALL || get_be32(msg + 4) != RPCRDMA_RPC_CALL ||
	    get_be32(msg + 8) != RPCRDMA_RPC_VERS || get_be32(msg + 24) != RPCRDMA_RPC_AUTH_NONE ||
	    get_be32(msg + 28) || get_be32(msg + 32) != RPCRDMA_RPC_AUTH_NONE || get_be32(msg + 36))
		return false;
	call->xid = get_be32(msg);
	call->rpcvers = get_be32(msg + 8);
	call->prog = get_be32(msg + 12);
	call->vers = get_be32(msg + 16);
	call->proc = get_be32(msg + 20);
	call->cred.flavor = RPCRDMA_RPC_AUTH_NONE;
	call->cred.len = 0;
	call->verf.flavor = RPCRDMA_RPC_AUTH_NONE;
	call->verf.len = 0;
	return true;
}

void xprt_short_reply_hdr(uint8_t *p, uint32_t xid)
{
	/* RFC 5531 §9: xid, REPLY, MSG_ACCEPTED, verf AUTH_NONE, SUCCESS. */
	put_be32(p, xid);
	put_be32(p + 4, RPCRDMA_RPC_REPLY);
	put_be32(p + 8, RPCRDMA_RPC_MSG_ACCEPTED);
	put_be32(p + 12, RPCRDMA_RPC_AUTH_NONE);
	put_be32(p + 16, 0);
	put_be32(p + 20, RPCRDMA_RPC_SUCCESS);
}

bool xprt_short_reply_ok(const uint8_t *msg, size_t len, uint32_t xid)
{
	return len >= XPRT_SHORT_REPLY && get_be32(msg) == xid &&
	       get_be32(msg + 4) == RPCRDMA_RPC_REPLY &&
	       get_be32(msg + 8) == RPCRDMA_RPC_MSG_ACCEPTED &&
	       get_be32(msg + 12) == RPCRDMA_RPC_AUTH_NONE && get_be32(msg + 16) == 0 &&
	       get_be32(msg + 20) == RPCRDMA_RPC_SUCCESS;
}
