// SPDX-License-Identifier: MIT
/*
 * Responder, Version Two (the early draft; docs/rpcrdma2.md): a Version
 * Two capable server checks what Version Two adds before a call joins the
 * common path (svc_conn.c handle_call) as its Version One view:
 *   - rdma_direction against the payload (§4.2.2): ERR_BAD_HEADER;
 *   - RDMA2_ERROR is never answered (§4.2.1);
 *   - RDMA2_OPTIONAL: an opttype we do not know is answered
 *     ERR_INVAL_OPTION with the same xid (§3.1); our transport properties
 *     are answered with ours (docs/rpcrdma2-extensions.md §3); a pull
 *     completion carrying a Call runs that Call (§4 there).
 * Every answer goes in Version Two, in the REPLY direction.
 */
#include <errno.h>

#include "transport/backchannel_hooks.h"
#include "transport/responder.h"
#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"
#include "util/probe.h"

/* The first Version Two call of a connection whose client sent no RFC
 * 8797 private data: 4096-byte thresholds from now on (draft §2.3). */
static void v2_first(struct svc_conn *c)
{
	if (c->v2_seen)
		return;
	c->v2_seen = true;
	xprt_v2_raise_inline(&c->lim, c->svc->inline_send, c->svc->inline_recv);
	RPCRDMA_PROBE(v2_result, RPCRDMA_PROBE_SERVER, RPCRDMA2_VERSION, c->lim.inline_send,
		      c->lim.inline_recv);
	if (c->bc)
		bc_svc_conn_v2(c->bc, &c->lim);
}

/* The client's properties: take them (sizes above the current thresholds
 * raise them, within our buffers) and answer with ours, same xid, optdir
 * REPLY. Returns the RDMA2_ERROR code to answer instead, or 0. */
static uint32_t props_call(struct svc_conn *c, struct rpcrdma_svc_req *r, const uint8_t *buf,
			   const struct xprt_v2_info *vi)
{
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma2_props peer, ours;
	struct rpcrdma_xdr x;
	uint8_t opt[64];
	uint32_t olen, sidx;

	if (!s->v2_props)
		return RPCRDMA2_ERR_INVAL_OPTION; /* as a server without the extension */
	if (rpcrdma2_props_decode(buf + vi->optinfo_off, vi->optinfo_len, &peer))
		return RPCRDMA2_ERR_BAD_HEADER;
	if (vi->optdir != RPCRDMA2_CALL)
		return 0; /* a requester's properties travel as a call; dropped */
	c->v2_props_seen = true;
	c->rr_peer = peer.resp_read;
	v2_first(c);
	xprt_v2_props_apply(&c->lim, &peer, s->inline_send, s->inline_recv, s->remote_inv);
	if (c->bc)
		bc_svc_conn_v2(c->bc, &c->lim);
	xprt_v2_props_ours(&ours, s->inline_send, s->inline_recv, s->bc != NULL, s->remote_inv,
			   s->rr);
	if (rpcrdma2_props_encode(opt, sizeof(opt), &ours, &olen) || c->dead ||
	    svc_send_buf_get(c, &sidx))
		return 0;
	rpcrdma_xdr_init(&x, xprt_pool_buf(&c->sendp, sidx), c->sendp.size, RPCRDMA_XDR_ENCODE);
	if (rpcrdma2_encode_optional(&x, r->h.xid, svc_grant(r->conn), RPCRDMA2_REPLY,
				     RPCRDMA2_OPTTYPE_PROPS, opt, olen) ||
	    svc_post_send(c, sidx, rpcrdma_xdr_getpos(&x), 0, -1))
		svc_send_buf_put(c, sidx);
	return 0;
}

/* RDMA2_OPTIONAL. 1: answered or dropped; 0: it carried a Call to run. */
static int optional_msg(struct svc_conn *c, struct rpcrdma_svc_req *r, const uint8_t *buf,
			uint32_t len, const struct xprt_v2_info *vi)
{
	struct rpcrdma_svc *s = c->svc;
	uint32_t err = 0, xid, mt;

	switch (vi->opttype) {
	case RPCRDMA2_OPTTYPE_PROPS:
		err = props_call(c, r, buf, vi);
		break;
	case RPCRDMA2_OPTTYPE_PULL_DONE:
		/* The exposed reply it names is released (exposed.c; an
		 * unknown xid is dropped). A Call riding along runs as an
		 * RDMA2_MSG without chunks. */
		if (rpcrdma2_pull_done_decode(buf + vi->optinfo_off, vi->optinfo_len, &xid)) {
			err = RPCRDMA2_ERR_BAD_HEADER;
			break;
		}
		if (s->rr)
			svc_rr_done(c, xid, c->rr_inv);
		if (r->h.hdr_len >= len)
			break; /* no payload */
		if (rpcrdma2_payload_msg_type(buf + r->h.hdr_len, len - r->h.hdr_len, &mt) ||
		    mt != vi->optdir) {
			err = RPCRDMA2_ERR_BAD_HEADER; /* §4.2.2 */
			break;
		}
		if (mt != RPCRDMA2_CALL)
			break;
		r->h.proc = RPCRDMA2_MSG;
		v2_first(c);
		return 0;
	default:
		/* Draft §3.1: not ours to know; answered whatever it carried. */
		err = RPCRDMA2_ERR_INVAL_OPTION;
		break;
	}
	if (err)
		s->st.bad_headers++;
	else
		s->st.dropped_msgs++;
	svc_refuse(c, r, err);
	return 1;
}

bool svc_v2_nomsg_bad_dir(const struct rpcrdma_svc_req *r)
{
	uint32_t mt;

	/* svc_v2_recv let only the CALL direction through; an RDMA2_NOMSG's
	 * payload, now pulled from its Position-Zero Read chunk, must be a
	 * CALL too. */
	if (r->h.vers != RPCRDMA2_VERSION || r->h.proc != RPCRDMA2_NOMSG)
		return false;
	return rpcrdma2_payload_msg_type(r->stage, r->stage_len, &mt) || mt != RPCRDMA2_CALL;
}

int svc_v2_recv(struct svc_conn *c, struct rpcrdma_svc_req *r, const uint8_t *buf, uint32_t len)
{
	struct rpcrdma_svc *s = c->svc;
	struct xprt_v2_info vi;
	int rc = xprt_v2_decode(buf, len, &r->h, &vi);

	if (rc == -EPROTONOSUPPORT)
		return rc;
	if (r->h.proc == RPCRDMA2_ERROR) {
		/* §4.2.1: never answered, whatever its code */
		RPCRDMA_PROBE(error_recv, RPCRDMA_PROBE_SERVER, r->h.xid, r->h.err, r->h.vers);
		s->st.dropped_msgs++;
		svc_refuse(c, r, 0);
		return 1;
	}
	if (rc) {
		/* Every undecodable Version Two header (docs/rpcrdma2-extensions.md
		 * §1 item 6); the fixed words name the xid. */
		s->st.bad_headers++;
		svc_refuse(c, r, RPCRDMA2_ERR_BAD_HEADER);
		return 1;
	}
	if (r->h.proc == RPCRDMA2_OPTIONAL)
		return optional_msg(c, r, buf, len, &vi);
	if (xprt_v2_check_msg_dir(&r->h, &vi, buf, len)) {
		s->st.bad_headers++;
		svc_refuse(c, r, RPCRDMA2_ERR_BAD_HEADER);
		return 1;
	}
	if (vi.dir != RPCRDMA2_CALL) {
		/* A reply with no reverse call to match (those reach the
		 * backchannel first): dropped, as a stray Version One reply. */
		s->st.dropped_msgs++;
		svc_refuse(c, r, 0);
		return 1;
	}
	v2_first(c);
	return 0;
}
