// SPDX-License-Identifier: MIT
/*
 * Bidirectional RPC-over-RDMA (RFC 8167), transport half: the direction of
 * a received message and the reverse responder's Read chunk rules. See
 * backchannel.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/backchannel.h"
#include "util/be.h"
#include "util/clock.h"

static enum xprt_dir rpc_dir(const uint8_t *msg, size_t len, uint32_t xid)
{
	uint32_t mt;

	if (len < 8)
		return XPRT_DIR_NONE;
	/* RFC 8167 §5.1, §5.2: the RPC message starts with the transport
	 * header's XID; otherwise nothing in it can be trusted. */
	if (get_be32(msg) != xid)
		return XPRT_DIR_NONE;
	mt = get_be32(msg + 4);
	if (mt == 0)
		return XPRT_DIR_CALL;
	if (mt == 1)
		return XPRT_DIR_REPLY;
	return XPRT_DIR_NONE;
}

enum xprt_dir xprt_msg_direction(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h,
				 bool *decoded)
{
	uint32_t xid;

	*decoded = false;
	if (len < RPCRDMA1_FIXED_SIZE)
		return XPRT_DIR_NONE;
	xid = get_be32(buf);
	if (get_be32(buf + 4) != RPCRDMA1_VERSION)
		return XPRT_DIR_NONE;
	/* Fast path: RDMA_MSG with three empty chunk lists, the RPC message
	 * right after the 28-byte header. */
	if (get_be32(buf + 12) == RPCRDMA1_MSG && len >= RPCRDMA1_MIN_MSG_SIZE &&
	    get_be32(buf + 16) == 0 && get_be32(buf + 20) == 0 && get_be32(buf + 24) == 0)
		return rpc_dir(buf + RPCRDMA1_MIN_MSG_SIZE, len - RPCRDMA1_MIN_MSG_SIZE, xid);
	if (rpcrdma1_decode_buf(buf, len, h))
		return XPRT_DIR_NONE;
	*decoded = true;
	switch (h->proc) {
	case RPCRDMA1_MSG:
	case RPCRDMA1_MSGP:
		if (h->hdr_len > len)
			return XPRT_DIR_NONE;
		return rpc_dir(buf + h->hdr_len, len - h->hdr_len, xid);
	case RPCRDMA1_NOMSG:
		/* RFC 8166 §3.5.3.1: a Long Call's message is the
		 * Position-Zero Read chunk; §3.5.3.2: a Long Reply's is in the
		 * Reply chunk, and Version One replies carry no Read list. */
		if (h->chunks.nreads && h->chunks.reads[0].position == 0)
			return XPRT_DIR_CALL;
		if (h->chunks.reply_present && !h->chunks.nreads)
			return XPRT_DIR_REPLY;
		return XPRT_DIR_NONE;
	default:
		/* RDMA_ERROR and RDMA_DONE carry no RPC message. */
		return XPRT_DIR_NONE;
	}
}

enum xprt_dir xprt_v2_msg_direction(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h,
				    bool *decoded)
{
	struct xprt_v2_info vi;

	*decoded = false;
	if (len < RPCRDMA1_FIXED_SIZE || get_be32(buf + 4) != RPCRDMA2_VERSION ||
	    xprt_v2_decode(buf, len, h, &vi))
		return XPRT_DIR_NONE;
	*decoded = true;
	/* Draft §4.2.2: Version Two says its direction; an RDMA2_MSG's
	 * payload must agree (else the forward path answers ERR_BAD_HEADER). */
	if ((h->proc != RPCRDMA2_MSG && h->proc != RPCRDMA2_NOMSG) ||
	    xprt_v2_check_msg_dir(h, &vi, buf, len))
		return XPRT_DIR_NONE;
	return vi.dir == RPCRDMA2_CALL ? XPRT_DIR_CALL : XPRT_DIR_REPLY;
}

bool xprt_bc_has_chunks(const struct rpcrdma1_chunks *c)
{
	return c->nreads || c->nwrites || c->reply_present;
}

/* ------------------------------------------------------------------ */
/* Reverse responder                                                   */
/* ------------------------------------------------------------------ */

int xprt_bc_read_plan(const struct rpcrdma1_hdr *h, size_t inline_len, uint64_t max_total,
		      uint32_t *p0len, struct xprt_rchunk *rc, uint32_t *nrc, uint64_t *total)
{
	uint32_t nchunks;

	*p0len = 0;
	if (rpcrdma1_check_call(h) ||
	    xprt_read_plan(h, RPCRDMA_MAX_BULK, rc, nrc, p0len, &nchunks, total) ||
	    *total > max_total)
		return -EINVAL;
	/* Inline, every position must lie inside the message (the offsets
	 * grow, so the last one tells). */
	if (h->proc != RPCRDMA1_NOMSG && *nrc && rc[*nrc - 1].ioff > inline_len)
		return -EINVAL;
	return 0;
}
