// SPDX-License-Identifier: MIT
/*
 * Requester receive side: a reply's transport header has been decoded and
 * matched to its call by XID (requester.c). Here: RDMA_ERROR becomes the call's
 * error (RFC 8166 §4.5); the chunk lists are checked against what the call
 * offered, never trusted beyond it (a responder may not report more bytes
 * written than a chunk holds); then the RPC reply header and the results
 * are decoded from the inline message (RDMA_MSG) or the Reply chunk
 * (RDMA_NOMSG, Long Reply, RFC 8166 §3.5.3.2).
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/tirpc.h"
#include "transport/xprt.h"

/* RFC 8166 §3.4.6: the responder echoes Write chunk @i with the segments
 * we offered (@off), each length rewritten to the bytes written, filling
 * them in order: no segment holds more than offered, and none after a
 * partly filled one holds any. */
static bool write_chunk_in_order(const struct rpcrdma1_chunks *off,
				 const struct rpcrdma1_chunks *got, uint32_t i)
{
	const struct rpcrdma1_write_chunk *ow = &off->writes[i], *gw = &got->writes[i];
	bool partial = false;

	if (gw->nsegs != ow->nsegs)
		return false;
	for (uint32_t j = 0; j < gw->nsegs; j++) {
		uint32_t cap = off->wsegs[ow->first + j].length;
		uint32_t len = got->wsegs[gw->first + j].length;

		if (len > cap || (partial && len))
			return false;
		partial = len < cap;
	}
	return true;
}

/* Everything but the short reply without results (xprt_reply_process):
 * out of line, so that reply needs none of this function's stack frame. */
__attribute__((noinline)) static int reply_process_full(struct xprt_call *c, const uint8_t *buf,
							size_t len, const struct rpcrdma1_hdr *h,
							struct rpcrdma_call_result *r)
{
	struct rpcrdma_rpc_reply rep;
	struct rpcrdma_xdr x;
	struct xprt_ddp d;
	const uint8_t *msg;
	size_t mlen;
	uint64_t w;
	XDR xdrs;
	int st;

	if (h->proc == RPCRDMA1_ERROR) {
		r->rdma_err = h->err;
		if (h->err == RPCRDMA1_ERR_VERS) {
			r->mismatch_low = h->vers_low;
			r->mismatch_high = h->vers_high;
		}
		return xprt_rdma_err_status(h->err);
	}
	/* A pulled reply: RDMA_NOMSG with neither Read list (rr_pull.c took
	 * it) nor Reply chunk, its message in the Read chunk. */
	if (c->rr_msg ? h->proc != RPCRDMA1_NOMSG || h->chunks.nreads ||
			    rpcrdma1_write_list_length(&h->chunks, &w)
		      : rpcrdma1_check_reply(h) != 0)
		return -EBADMSG;
	if (h->chunks.nwrites > c->nwrite)
		return -EBADMSG;
	xprt_ddp_init(&d, XPRT_DDP_CLNT_DEC);
	for (uint32_t i = 0; i < h->chunks.nwrites; i++) {
		if (rpcrdma1_write_chunk_length(&h->chunks, i, &w) || w > c->write_cap[i] ||
		    !write_chunk_in_order(&c->chunks, &h->chunks, i))
			return -EBADMSG;
		d.placed[i] = (uint32_t)w;
	}
	d.nplaced = h->chunks.nwrites;
	if (h->proc == RPCRDMA1_NOMSG && c->rr_msg) {
		msg = c->rr_msg; /* pulled from the responder's Read chunk */
		mlen = c->rr_len;
	} else if (h->proc == RPCRDMA1_NOMSG) {
		if (!c->reply_offered || rpcrdma1_reply_chunk_length(&h->chunks, &w) ||
		    w > c->reply_cap)
			return -EBADMSG;
		msg = c->lreply.buf;
		mlen = (size_t)w;
	} else {
		if (h->hdr_len > len)
			return -EBADMSG;
		msg = buf + h->hdr_len;
		mlen = len - h->hdr_len;
	}

	if (xprt_short_reply_ok(msg, mlen, c->xid)) {
		/* The common accepted SUCCESS reply (short.c). */
		r->reply_stat = RPCRDMA_RPC_MSG_ACCEPTED;
		r->accept_stat = RPCRDMA_RPC_SUCCESS;
		if (!c->xres)
			return 0;
		rpcrdma_xdr_init(&x, (void *)(uintptr_t)(msg + XPRT_SHORT_REPLY),
				 mlen - XPRT_SHORT_REPLY, RPCRDMA_XDR_DECODE);
		goto results;
	}
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)msg, mlen, RPCRDMA_XDR_DECODE);
	if (rpcrdma_rpc_decode_reply(&x, &rep))
		return -EBADMSG;
	r->reply_stat = rep.reply_stat;
	r->accept_stat = rep.accept_stat;
	r->reject_stat = rep.reject_stat;
	r->auth_stat = rep.auth_stat;
	r->mismatch_low = rep.mismatch_low;
	r->mismatch_high = rep.mismatch_high;
	st = xprt_rpc_status(&rep);
	if (st)
		return st;
results:
	d.recv_bulk = xprt_recv_bulk(&c->opts, &d.nrecv_bulk);
	rpcrdma_tirpc_xdr_create(&xdrs, &x);
	xprt_ddp_attach(&xdrs, &d);
	if (c->xres && !(*c->xres)(&xdrs, c->res))
		return -EBADMSG;
	/* RFC 8166 §3.4.6: a Write chunk no result item used comes back
	 * with length 0; bytes there belong to no result. */
	for (uint32_t i = d.idx; i < d.nplaced; i++)
		if (d.placed[i])
			return -EBADMSG;
	memcpy(r->recv_bulk_len, d.got, sizeof(r->recv_bulk_len));
	if ((c->opts.comp_mask & RPCRDMA_CALL_OPT_RECV_BULK_V) && c->opts.recv_bulk_len_v)
		memcpy(c->opts.recv_bulk_len_v, d.got, d.nrecv_bulk * sizeof(d.got[0]));
	return 0;
}

int xprt_reply_process(struct xprt_call *c, const uint8_t *buf, size_t len,
		       const struct rpcrdma1_hdr *h, struct rpcrdma_call_result *r)
{
	r->reply_proc = h->proc;
	/* The common Short reply: RDMA_MSG without any chunk (nothing
	 * rpcrdma1_check_reply() could object to, nothing placed), an accepted
	 * SUCCESS, no results to decode (short.c): done. */
	if (h->proc == RPCRDMA1_MSG && !h->chunks.nreads && !h->chunks.nwrites &&
	    !h->chunks.reply_present && !h->chunks.nreply && !c->xres && h->hdr_len <= len &&
	    xprt_short_reply_ok(buf + h->hdr_len, len - h->hdr_len, c->xid)) {
		r->reply_stat = RPCRDMA_RPC_MSG_ACCEPTED;
		r->accept_stat = RPCRDMA_RPC_SUCCESS;
		return 0;
	}
	return reply_process_full(c, buf, len, h, r);
}
