// SPDX-License-Identifier: MIT
/*
 * Responder, Version Two (the early draft; docs/rpcrdma2.md): a Version
 * Two capable server checks what Version Two adds before a call joins the
 * common path (svc_conn.c handle_call) as its Version One view:
 *   - rdma_direction against the payload (§4.2.2): ERR_BAD_HEADER;
 *   - RDMA2_ERROR is never answered (§4.2.1);
 *   - RDMA2_OPTIONAL: dispatched on the server's table (opt_dispatch.h,
 *     which answers an opttype we do not know ERR_INVAL_OPTION, §3.1):
 *     our transport properties are answered with ours
 *     (docs/rpcrdma2-extensions.md §3); a pull completion carrying a
 *     Call runs that Call (§4 there).
 * Every answer goes in Version Two, in the REPLY direction.
 */
#include <errno.h>

#include "transport/backchannel_hooks.h"
#include "transport/opt_dispatch.h"
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

/* The server's rows get the connection and the request it arrived in. */
struct svc_opt_ctx {
	struct svc_conn *c;
	struct rpcrdma_svc_req *r;
};

/* The client's properties (optdir CALL: a requester's properties travel
 * as a call; the other way they are dropped): take them (sizes above the
 * current thresholds raise them, within our buffers) and answer with
 * ours, same xid, optdir REPLY. */
static uint32_t props_row(void *ctx, const struct xprt_opt_msg *m, bool *more)
{
	struct svc_opt_ctx *x = ctx;
	struct svc_conn *c = x->c;
	struct rpcrdma_svc *s = c->svc;
	struct rpcrdma2_props peer, ours;
	struct rpcrdma_xdr xd;
	uint8_t opt[64];
	uint32_t olen, sidx;

	(void)more;
	if (rpcrdma2_props_decode(m->optinfo, m->optinfo_len, &peer))
		return RPCRDMA2_ERR_BAD_HEADER;
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
	rpcrdma_xdr_init(&xd, xprt_pool_buf(&c->sendp, sidx), c->sendp.size, RPCRDMA_XDR_ENCODE);
	if (rpcrdma2_encode_optional(&xd, m->xid, svc_grant(c), RPCRDMA2_REPLY,
				     RPCRDMA2_OPTTYPE_PROPS, opt, olen) ||
	    svc_post_send(c, sidx, rpcrdma_xdr_getpos(&xd), 0, -1))
		svc_send_buf_put(c, sidx);
	return 0;
}

/* Pull completion, either direction: the exposed reply it names is
 * released (exposed.c; an unknown xid is dropped). A Call riding along
 * runs as an RDMA2_MSG without chunks (*more). */
static uint32_t pull_done_row(void *ctx, const struct xprt_opt_msg *m, bool *more)
{
	struct svc_opt_ctx *x = ctx;
	uint32_t xid, mt;

	if (rpcrdma2_pull_done_decode(m->optinfo, m->optinfo_len, &xid))
		return RPCRDMA2_ERR_BAD_HEADER;
	if (x->c->svc->rr)
		svc_rr_done(x->c, xid, x->c->rr_inv);
	if (m->hdr_len >= m->len)
		return 0; /* no payload */
	if (rpcrdma2_payload_msg_type(m->buf + m->hdr_len, m->len - m->hdr_len, &mt) ||
	    mt != m->optdir)
		return RPCRDMA2_ERR_BAD_HEADER; /* §4.2.2 */
	if (mt != RPCRDMA2_CALL)
		return 0;
	x->r->h.proc = RPCRDMA2_MSG;
	v2_first(x->c);
	*more = true;
	return 0;
}

static void svc_opt_answer(void *ctx, const struct xprt_opt_msg *m, uint32_t err)
{
	struct svc_opt_ctx *x = ctx;

	(void)m;
	x->c->svc->st.bad_headers++;
	svc_refuse(x->c, x->r, err);
}

static void svc_opt_settle(void *ctx, const struct xprt_opt_msg *m)
{
	struct svc_opt_ctx *x = ctx;

	(void)m;
	x->c->svc->st.dropped_msgs++;
	svc_refuse(x->c, x->r, 0);
}

/* What a server takes (opt_dispatch.h). Without rdma_props the
 * properties row is left out: answered as a server without the extension
 * answers them (ERR_INVAL_OPTION). */
static const struct xprt_opt_row svc_rows[] = {
    {RPCRDMA2_OPTTYPE_PULL_DONE, XPRT_OPT_EITHER, false, pull_done_row},
    {RPCRDMA2_OPTTYPE_PROPS, RPCRDMA2_CALL, false, props_row},
};
static const struct xprt_opt_role svc_role = {svc_rows, 2, svc_opt_answer, svc_opt_settle};
static const struct xprt_opt_role svc_role_noprops = {svc_rows, 1, svc_opt_answer, svc_opt_settle};

/* RDMA2_OPTIONAL. 1: answered or dropped; 0: it carried a Call to run. */
static int optional_msg(struct svc_conn *c, struct rpcrdma_svc_req *r, const uint8_t *buf,
			uint32_t len, const struct xprt_v2_info *vi)
{
	struct svc_opt_ctx x = {c, r};
	const struct xprt_opt_msg m = {.xid = r->h.xid,
				       .optdir = vi->optdir,
				       .opttype = vi->opttype,
				       .optinfo = buf + vi->optinfo_off,
				       .optinfo_len = vi->optinfo_len,
				       .buf = buf,
				       .len = len,
				       .hdr_len = r->h.hdr_len};

	return xprt_opt_dispatch(c->svc->v2_props ? &svc_role : &svc_role_noprops, &x, &m) ? 0 : 1;
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
