// SPDX-License-Identifier: MIT
/*
 * Version Two in the engine (the early draft; docs/rpcrdma2.md): what the
 * requester and the responders share to receive and send Version Two
 * headers. The engine works on the Version One view of a header (struct
 * rpcrdma1_hdr): RDMA2_MSG, RDMA2_NOMSG and RDMA2_ERROR have Version One's
 * procedure numbers and chunk lists (chunks_xdr.h), so a decoded Version
 * Two header becomes that view plus the few words Version One lacks
 * (rdma_direction, the RDMA2_OPTIONAL fields) in struct xprt_v2_info.
 * Sending is the other way round: the header encoders take the version.
 */
#include <errno.h>
#include <string.h>

#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"
#include "transport/xprt.h"
#include "util/be.h"

/* Copy the used part of the chunk lists (a header rarely fills them). */
static void chunks_copy(struct rpcrdma1_chunks *d, const struct rpcrdma1_chunks *s)
{
	d->nreads = s->nreads;
	d->nwrites = s->nwrites;
	d->nwsegs = s->nwsegs;
	d->nreply = s->nreply;
	d->reply_present = s->reply_present;
	memcpy(d->reads, s->reads, s->nreads * sizeof(s->reads[0]));
	memcpy(d->writes, s->writes, s->nwrites * sizeof(s->writes[0]));
	memcpy(d->wsegs, s->wsegs, s->nwsegs * sizeof(s->wsegs[0]));
	memcpy(d->reply, s->reply, s->nreply * sizeof(s->reply[0]));
}

int xprt_v2_decode(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h, struct xprt_v2_info *vi)
{
	struct rpcrdma2_hdr h2;
	int rc = rpcrdma2_decode_buf(buf, len, &h2);

	/* The fixed words identify the message to answer, even on failure. */
	h->xid = h2.xid;
	h->vers = h2.vers;
	h->credit = h2.credit;
	h->proc = h2.proc;
	memset(vi, 0, sizeof(*vi));
	if (rc)
		return rc;
	h->hdr_len = h2.hdr_len;
	vi->dir = h2.direction;
	switch (h2.proc) {
	case RPCRDMA2_MSG:
	case RPCRDMA2_NOMSG:
		chunks_copy(&h->chunks, &h2.chunks);
		break;
	case RPCRDMA2_ERROR:
		/* The codes keep Version One's meaning where they share a
		 * number: ERR_VERS (1) with its range, BAD_HEADER (2) where
		 * Version One had ERR_CHUNK; INVAL_OPTION (3) is new. */
		h->err = h2.err;
		h->vers_low = h2.vers_low;
		h->vers_high = h2.vers_high;
		rpcrdma1_chunks_init(&h->chunks);
		break;
	default: /* RPCRDMA2_OPTIONAL */
		vi->optdir = h2.optdir;
		vi->opttype = h2.opttype;
		vi->optinfo_off = h2.optinfo_off;
		vi->optinfo_len = h2.optinfo_len;
		rpcrdma1_chunks_init(&h->chunks);
		break;
	}
	return 0;
}

int xprt_v2_check_msg_dir(const struct rpcrdma1_hdr *h, const struct xprt_v2_info *vi,
			  const uint8_t *buf, size_t len)
{
	uint32_t mt;

	/* Draft §4.2.2: rdma_direction equals the payload's msg_type. An
	 * RDMA2_NOMSG's payload arrives by chunk: its RPC decoder judges it. */
	if (h->proc != RPCRDMA2_MSG)
		return 0;
	if (h->hdr_len > len || rpcrdma2_payload_msg_type(buf + h->hdr_len, len - h->hdr_len, &mt))
		return -EPROTO;
	return mt == vi->dir ? 0 : -EPROTO;
}

int xprt_hdr_encode(struct rpcrdma_xdr *x, uint32_t vers, bool nomsg, uint32_t xid, uint32_t credit,
		    uint32_t dir, const struct rpcrdma1_chunks *ch)
{
	if (vers == RPCRDMA2_VERSION)
		return nomsg ? rpcrdma2_encode_nomsg(x, xid, credit, dir, ch)
			     : rpcrdma2_encode_msg(x, xid, credit, dir, ch);
	return nomsg ? rpcrdma1_encode_nomsg(x, xid, credit, ch)
		     : rpcrdma1_encode_msg(x, xid, credit, ch);
}

uint32_t xprt_v2_short_msg(uint8_t *p, uint32_t xid, uint32_t credit, uint32_t dir)
{
	/* Draft §4.2: xid, vers, credit, proc, rdma_direction, three empty
	 * lists. */
	put_be32(p, xid);
	put_be32(p + 4, RPCRDMA2_VERSION);
	put_be32(p + 8, credit);
	put_be32(p + 12, RPCRDMA2_MSG);
	put_be32(p + 16, dir);
	put_be32(p + 20, 0);
	put_be32(p + 24, 0);
	put_be32(p + 28, 0);
	return RPCRDMA2_MIN_MSG_SIZE;
}

int xprt_v2_encode_error(void *buf, size_t len, uint32_t xid, uint32_t credit, uint32_t err)
{
	struct rpcrdma_xdr x;
	int rc;

	rpcrdma_xdr_init(&x, buf, len, RPCRDMA_XDR_ENCODE);
	if (err == RPCRDMA2_ERR_VERS)
		rc = rpcrdma2_encode_err_vers(&x, xid, credit, RPCRDMA1_VERSION, RPCRDMA2_VERSION);
	else
		rc = rpcrdma2_encode_error(&x, xid, credit, err);
	return rc ? rc : (int)rpcrdma_xdr_getpos(&x);
}

void xprt_v2_raise_inline(struct xprt_limits *lim, uint32_t our_send, uint32_t our_recv)
{
	/* Draft §2.3: Version Two receivers take 4096 bytes; RFC 8797
	 * private data, when the peer sent it, already said what it takes. */
	if (lim->pdata)
		return;
	lim->inline_send = our_send < RPCRDMA2_DEFAULT_INLINE ? our_send : RPCRDMA2_DEFAULT_INLINE;
	lim->inline_recv = our_recv < RPCRDMA2_DEFAULT_INLINE ? our_recv : RPCRDMA2_DEFAULT_INLINE;
}

int xprt_decode_hdr(const uint8_t *buf, size_t len, struct rpcrdma1_hdr *h, bool v2)
{
	struct xprt_v2_info vi;
	int rc = rpcrdma1_decode_buf(buf, len, h);

	if (rc == -EPROTONOSUPPORT && v2) {
		rc = xprt_v2_decode(buf, len, h, &vi);
		if (!rc && h->proc == RPCRDMA2_OPTIONAL)
			rc = -EOPNOTSUPP; /* not a message of the backchannel's */
	}
	return rc;
}

void xprt_v2_props_ours(struct rpcrdma2_props *p, uint32_t send, uint32_t recv, bool bc,
			bool remote_inv, bool resp_read)
{
	rpcrdma2_props_init(p);
	p->present = RPCRDMA2_PROPF_MAX_SEND_SIZE | RPCRDMA2_PROPF_RECV_BUF_SIZE |
		     RPCRDMA2_PROPF_REVERSE_DIR | RPCRDMA2_PROPF_REMOTE_INV;
	p->max_send_size = send;
	p->recv_buf_size = recv;
	/* version-two-07 §5.2.5: GENL is reverse-direction messages "as in
	 * the forward direction", Write chunks included, and neither side of
	 * our backchannel takes those (backchannel.h: results travel inline
	 * or in the Reply chunk; a reverse call with a Write list is answered
	 * ERR_CHUNK). Read and Reply chunks alone have no level of their own:
	 * the highest one we fully meet is SIMPLE (inline messages). */
	p->reverse_dir = bc ? RPCRDMA2_RVRSDIR_SIMPLE : RPCRDMA2_RVRSDIR_NONE;
	p->remote_inv = remote_inv;
	if (resp_read) {
		p->present |= RPCRDMA2_PROPF_RESP_READ;
		p->resp_read = true;
	}
}

void xprt_v2_props_apply(struct xprt_limits *lim, const struct rpcrdma2_props *p, uint32_t our_send,
			 uint32_t our_recv, bool our_inv)
{
	/* What we send must fit its receive buffers; what it sends, ours. */
	if (p->recv_buf_size > lim->inline_send)
		lim->inline_send = p->recv_buf_size < our_send ? p->recv_buf_size : our_send;
	if (p->max_send_size > lim->inline_recv)
		lim->inline_recv = p->max_send_size < our_recv ? p->max_send_size : our_recv;
	/* docs/rpcrdma2-extensions.md §3: Send With Invalidate when both
	 * sides announced it, whatever RFC 8797 private data said before (a
	 * connection without it starts with remote invalidation off); a
	 * peer that says FALSE gets none. Not sent: unchanged. */
	if (p->present & RPCRDMA2_PROPF_REMOTE_INV)
		lim->remote_inv = our_inv && p->remote_inv;
}
