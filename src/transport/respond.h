/* SPDX-License-Identifier: MIT */
/*
 * What the two responders share: the server's (responder.h) and the
 * client's reverse responder of RFC 8167 (bc_responder.c). Hidden symbols.
 *
 *   splice.c  the Read list as a responder pulls it (xprt_read_plan), and
 *             the call stream: inline bytes with the pulled chunks at
 *             their RFC 8166 §3.4.5 positions
 *   reply.c   reply marshalling: encoding (xprt_reply_encode), inline or
 *             Long Reply (xprt_reply_marshal), the echoed chunk lengths
 *             and the reply's transport header
 *
 * What differs on purpose stays with each responder: the server pulls a
 * call into one flat staging buffer within a pull budget and its Read
 * depth (pull.c); the reverse responder pulls into a buffer of its
 * request and reads the stream through an iovec (xprt_bc_splice). The
 * reverse direction has no Write chunks (a call offering any is answered
 * ERR_CHUNK), so its replies pass no DDP context.
 */
#ifndef RPCRDMA_TRANSPORT_RESPOND_H
#define RPCRDMA_TRANSPORT_RESPOND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/xprt.h"

/* ---- splice.c ---- */

/* A DDP Read chunk of a call (not the Position-Zero one). */
struct xprt_rchunk {
	uint32_t pos;  /* rdma_position: an offset in the complete stream */
	uint32_t len;  /* data bytes, without the XDR roundup */
	uint32_t ioff; /* the same place in the message sent without it */
	uint8_t *data; /* where it was pulled (set by the responder) */
};

/*
 * The Read list of call header @h as a responder pulls it (RFC 8166
 * §3.4.5): an optional Position-Zero chunk first (RDMA_NOMSG, a Long
 * Call: *@p0len), then at most @max_chunks DDP chunks at non-zero
 * positions, each at or after the end of the previous one's data and
 * roundup (rc[], *@nrc). A chunk is consecutive Read list entries with one
 * position. *@nchunks counts all chunks, *@total their bytes. 0, or -1
 * when the list cannot be used (RFC 8166 §4.5.2: ERR_CHUNK).
 */
int xprt_read_plan(const struct rpcrdma1_hdr *h, uint32_t max_chunks, struct xprt_rchunk *rc,
		   uint32_t *nrc, uint32_t *p0len, uint32_t *nchunks, uint64_t *total);

/* The call's XDR stream over an iovec: @base/@blen (inline message or
 * Position-Zero chunk) with every pulled chunk spliced in at its position
 * plus the XDR roundup the requester left out (RFC 8166 §3.4.5). */
int xprt_bc_splice(struct rpcrdma_xdr *x, const uint8_t *base, uint32_t blen,
		   const struct xprt_rchunk *rc, uint32_t nrc);

/* ---- reply.c ---- */

/* A reply to marshal: RPC reply header @rep and results @xres(@res); @ch
 * the call's chunk lists (its Write list and Reply chunk); @ddp, or NULL
 * when result bulk items go inline. */
struct xprt_reply {
	const struct rpcrdma_rpc_reply *rep;
	xdrproc_t xres;
	void *res;
	struct xprt_ddp *ddp;
	const struct rpcrdma1_chunks *ch;
};

/* Encode @rp at @buf/@cap; with a DDP context, bulk result items go to
 * the Write chunks of rp->ch (RFC 8166 §3.4.6). 0 or -EMSGSIZE. */
int xprt_reply_encode(const struct xprt_reply *rp, uint8_t *buf, size_t cap, size_t *len);

/*
 * Where @rp goes (no lock needed): inline behind the @hsize bytes of
 * transport header at @sbuf, within @cap bytes (the peer's receive
 * threshold); else, when the call offered a Reply chunk of at most
 * @max_long bytes, a Long Reply encoded into @lrep (RFC 8166 §3.5.3.2,
 * *@long_reply). *@mlen: the RPC message's bytes. 0 or -errno (it fits
 * nowhere the requester allowed: RFC 8166 §4.5.2).
 */
int xprt_reply_marshal(const struct xprt_reply *rp, uint64_t max_long, uint8_t *sbuf, size_t hsize,
		       size_t cap, struct xprt_lbuf *lrep, size_t *mlen, bool *long_reply);

/* The reply echoes the call's Write list and Reply chunk in @ch (as Linux
 * does): the chunks not written into report 0 bytes (RFC 8166 §3.4.6);
 * the ones written report what was (set by xprt_write_segments). @ddp:
 * the Write chunks used, or NULL. */
void xprt_reply_echo(struct rpcrdma1_chunks *ch, const struct xprt_ddp *ddp, bool long_reply);

/* The reply's transport header at @buf/@hsize: RDMA_MSG, or RDMA_NOMSG
 * for a Long Reply, in version @vers (the call's; Version Two: direction
 * REPLY), with rdma_credit @credits and the echoed chunks @ch.
 * 0 or -errno. */
int xprt_reply_hdr(uint8_t *buf, size_t hsize, uint32_t vers, uint32_t xid, uint32_t credits,
		   const struct rpcrdma1_chunks *ch, bool long_reply);

#endif
