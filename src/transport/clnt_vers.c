// SPDX-License-Identifier: MIT
/*
 * Requester, Version Two negotiation (the early draft §5; docs/rpcrdma2.md).
 *
 * With RPCRDMA_VERSION_AUTO or _2, each connection starts in Version Two:
 * its first call goes as a Version Two message of at most 1024 bytes
 * (the inline send threshold is held there), and it goes alone: a new
 * connection's credit window is one call until the first reply (RFC 8166
 * §3.3.1), which is exactly "only that one message until a reply that is
 * not an error arrives". Then:
 *   - a Version Two reply that is not RDMA2_ERROR: Version Two is in use,
 *     the thresholds are the negotiated ones (4096 without private data);
 *   - ERR_VERS with AUTO: Version One from now on, on the same connection;
 *     the call goes again, first, in Version One (same XID: the server did
 *     not run it);
 *   - ERR_VERS with _2: the call fails -EPROTONOSUPPORT (its result says
 *     ERR_VERS and the server's range) and the next call probes again;
 *   - any other reply: the call ends with it; the next call probes again.
 * The probe's reply may also never come: a responder that does not know
 * Version Two may drop the message silently. Draft §5.2 lets the
 * requester then assume no Version Two support: with AUTO, a probe still
 * on the wire at its call's deadline (the call fails -ETIMEDOUT) closes
 * the connection, and every later connection of the client speaks Version
 * One (clnt_v2_probe_lost; the calls waiting go out on the fresh one).
 * An ERR_VERS's rdma_credit is not taken: the draft keeps the single
 * message until a non-error message reports the actual credit limit.
 * After a reconnect the version is negotiated again: a server may have
 * been replaced by one of another version, and the cost is one round trip.
 * This cannot loop: a connection that drops right after an ERR_VERS only
 * retransmits the call, which counts against the call's retries like any
 * other retransmission (reconnect.c).
 *
 * Received Version Two messages: a header in error (undecodable, or a
 * reply that does not say REPLY) is discarded, touching no call and no
 * credit grant (RFC 8166 §4.5: errors in a reply are not the call's
 * answer). An RDMA2_OPTIONAL goes through the client's table
 * (opt_dispatch.h): our properties' answer, or else answered RDMA2_ERROR /
 * ERR_INVAL_OPTION with its xid (draft §3.1), whatever its optdir: from the backchannel's reverse responder when it is a call and
 * the client has one (bc_responder.c), else from the few send buffers
 * kept here for that.
 */
#include <errno.h>

#include "transport/backchannel_hooks.h"
#include "transport/opt_dispatch.h"
#include "transport/requester.h"
#include "transport/rpcrdma2_hdr.h"
#include "transport/rpcrdma2_opt.h"
#include "util/log.h"
#include "util/probe.h"

/* RDMA2_ERROR answers in flight at once (more are dropped and counted);
 * each is five words. */
#define CLNT_V2_NANS   4u
#define CLNT_V2_ANSBUF 32u
/* How long our transport properties may wait for their answer when calls
 * have no timeout (else half the call timeout). */
#define CLNT_PROPS_WAIT_MS 15000u

int clnt_v2_init(struct rpcrdma_clnt *c, uint32_t *wrs)
{
	*wrs = 0;
	if (c->vpolicy == RPCRDMA_VERSION_1)
		return 0;
	*wrs = CLNT_V2_NANS;
	return xprt_pool_init(&c->v2ans, c->pd, CLNT_V2_NANS, CLNT_V2_ANSBUF);
}

void clnt_v2_fini(struct rpcrdma_clnt *c)
{
	if (c->v2ans.base)
		xprt_pool_fini(&c->v2ans);
}

void clnt_v2_answer_wc(struct rpcrdma_clnt *c, uint32_t idx)
{
	if (idx < CLNT_V2_NANS)
		c->v2ans_busy &= ~(1u << idx);
}

/*
 * Lock held: answer the message @xid with RDMA2_ERROR @err (draft §3.1).
 * It travels outside the credit window, as the pull-completion notices of
 * rr_pull.c do, at most CLNT_V2_NANS at once; its rdma_credit is what our
 * calls carry (an RDMA2_ERROR's direction cannot be told, so a peer with
 * a backchannel ignores it, RFC 8167 §4.1).
 */
static void answer(struct rpcrdma_clnt *c, uint32_t xid, uint32_t err)
{
	struct rpcrdma_send_wr wr = {0};
	struct rpcrdma_sge sge;
	uint32_t i;
	int len;

	for (i = 0; i < CLNT_V2_NANS && (c->v2ans_busy & (1u << i)); i++)
		;
	if (!c->v2ans.base || i == CLNT_V2_NANS || c->state != C_UP || !c->ep) {
		c->st.dropped_msgs++;
		return;
	}
	len =
	    xprt_v2_encode_error(xprt_pool_buf(&c->v2ans, i), CLNT_V2_ANSBUF, xid, c->nslots, err);
	if (len < 0) {
		c->st.dropped_msgs++;
		return;
	}
	RPCRDMA_PROBE(error_send, RPCRDMA_PROBE_CLIENT, xid, err, RPCRDMA2_VERSION);
	sge = xprt_pool_sge(&c->v2ans, i, 0, (size_t)len);
	wr.wr_id = clnt_wrid(c->gen, CLNT_WR_V2_ANSWER, i);
	wr.opcode = RPCRDMA_WR_SEND;
	wr.flags = RPCRDMA_SEND_SIGNALED; /* the buffer is free again at its completion */
	wr.sg = &sge;
	wr.num_sge = 1;
	if (rpcrdma_post_send(c->ep, &wr)) {
		c->st.dropped_msgs++;
		return; /* the connection is going: its end says so */
	}
	c->v2ans_busy |= 1u << i;
	c->st.inline_bytes_tx += (uint64_t)len;
}

/*
 * Lock held, from the reply that completed negotiation (before that reply
 * gives its credit back): send our properties once, as a call without a
 * caller (a zombie slot: freed by its answer or by the connection's end).
 * It takes a credit and an XID of the call XID space like a call; it
 * needs a free slot, so with one slot there are no properties, and the
 * receives posted still cover the calls on the wire (requester.h rpend).
 */
static void props_send(struct rpcrdma_clnt *c)
{
	struct rpcrdma2_props p;
	struct rpcrdma_send_wr wr = {0};
	struct rpcrdma_xdr x;
	struct clnt_slot *s = NULL;
	uint8_t opt[64];
	uint32_t olen;

	for (uint32_t i = 0; c->nfree && i < c->nslots; i++) {
		if (!c->slots[i].in_use) {
			s = &c->slots[i];
			break;
		}
	}
	xprt_v2_props_ours(&p, c->inline_send, c->inline_recv, c->bc != NULL, c->remote_inv,
			   c->rr_opt);
	if (!s || rpcrdma2_props_encode(opt, sizeof(opt), &p, &olen))
		return;
	if (s->call.mr_used)
		c->st.local_invalidations += xprt_call_fence(&s->call, false, 0);
	s->call.xid = xprt_xid_make(c->xid_seq++, s->index);
	rpcrdma_xdr_init(&x, s->call.hdr, c->lim.inline_send, RPCRDMA_XDR_ENCODE);
	if (rpcrdma2_encode_optional(&x, s->call.xid, c->nslots, RPCRDMA2_CALL,
				     RPCRDMA2_OPTTYPE_PROPS, opt, olen))
		return;
	s->call.sge[0].addr = (uint64_t)(uintptr_t)s->call.hdr;
	s->call.sge[0].length = (uint32_t)rpcrdma_xdr_getpos(&x);
	s->call.sge[0].lkey = s->call.lkey;
	wr.wr_id = clnt_wrid(c->gen, CLNT_WR_SEND, s->index);
	wr.opcode = RPCRDMA_WR_SEND;
	wr.sg = s->call.sge;
	wr.num_sge = 1;
	if (rpcrdma_post_send(c->ep, &wr))
		return; /* the connection is going: its end says so */
	c->nfree--;
	s->in_use = true;
	s->zombie = true;
	s->done = false;
	s->need_tx = false;
	s->on_wire = true;
	/* Dead once this is passed (clnt_credits_held_by_dead): half the
	 * call timeout, so that a call waiting behind them still completes
	 * on the next connection. */
	s->deadline = xprt_deadline_at(monotonic_ns(), c->timeout_ms ? c->timeout_ms / 2u + 1u
								     : CLNT_PROPS_WAIT_MS);
	xprt_credits_sent(&c->cr);
	c->props_xid = s->call.xid;
	c->st.inline_bytes_tx += s->call.sge[0].length;
}

void clnt_v2_conn_up(struct rpcrdma_clnt *c)
{
	c->props_xid = 0;
	c->v2ans_busy = 0; /* the last endpoint, and its Sends, are gone */
	if (c->vpolicy == RPCRDMA_VERSION_1 || c->v2_off) {
		c->lim.vers = RPCRDMA1_VERSION;
		c->neg = CLNT_NEG_DONE;
		c->rx_vers = RPCRDMA1_VERSION;
		c->st.rdma_version = RPCRDMA1_VERSION;
		return;
	}
	c->lim.vers = RPCRDMA2_VERSION;
	c->neg = CLNT_NEG_PROBE;
	c->rx_vers = 0;
	c->st.rdma_version = 0;
	c->neg_send = c->lim.inline_send;
	if (c->lim.inline_send > RPCRDMA2_FIRST_MSG_MAX)
		c->lim.inline_send = RPCRDMA2_FIRST_MSG_MAX;
}

/* c->neg is CLNT_NEG_PROBE: what the reply @h to the Version Two call @s
 * says (see clnt_v2_reply_vers). */
static bool probe_reply(struct rpcrdma_clnt *c, struct clnt_slot *s, const struct rpcrdma1_hdr *h,
			int rc)
{
	if (rc == 0 && h->proc == RPCRDMA2_ERROR && h->err == RPCRDMA2_ERR_VERS) {
		if (c->vpolicy != RPCRDMA_VERSION_AUTO || h->vers_low > RPCRDMA1_VERSION)
			return false; /* the call fails with ERR_VERS */
		/* Draft §5: go on in the highest version both support. */
		c->lim.vers = RPCRDMA1_VERSION;
		c->lim.inline_send = c->neg_send;
		c->neg = CLNT_NEG_DONE;
		c->rx_vers = RPCRDMA1_VERSION;
		c->st.rdma_version = RPCRDMA1_VERSION;
		c->st.err_vers_rx++;
		RPCRDMA_PROBE(error_recv, RPCRDMA_PROBE_CLIENT, h->xid, h->err, h->vers);
		RPCRDMA_PROBE(v2_result, RPCRDMA_PROBE_CLIENT, c->lim.vers, c->lim.inline_send,
			      c->lim.inline_recv);
		/* Draft §5: one message at a time until a message that is not
		 * an error reports the credit limit; the ERR_VERS's rdma_credit
		 * is not one (the grant stays at the connection's first, 1). */
		c->st.credits = c->cr.grant;
		s->on_wire = false;
		xprt_credits_done(&c->cr);
		c->st.outstanding = c->cr.on_wire;
		if (s->zombie) {
			clnt_slot_free(c, s);
			return true;
		}
		if (s->call.mr_used)
			c->st.local_invalidations += xprt_call_fence(&s->call, false, 0);
		if (!s->done)
			clnt_txq_push_front(c, s);
		return true;
	}
	/* A Version Two reply, or an RDMA2_ERROR of a code this version
	 * defines other than ERR_VERS (the call itself refused, e.g. the
	 * reply fits nowhere): the responder speaks Version Two. */
	if (rc == 0 && h->vers == RPCRDMA2_VERSION &&
	    (h->proc == RPCRDMA2_MSG || h->proc == RPCRDMA2_NOMSG ||
	     (h->proc == RPCRDMA2_ERROR &&
	      (h->err == RPCRDMA2_ERR_BAD_HEADER || h->err == RPCRDMA2_ERR_INVAL_OPTION)))) {
		c->neg = CLNT_NEG_DONE;
		c->rx_vers = RPCRDMA2_VERSION;
		c->st.rdma_version = RPCRDMA2_VERSION;
		c->lim.inline_send = c->neg_send;
		xprt_v2_raise_inline(&c->lim, c->inline_send, c->inline_recv);
		c->st.inline_send = c->lim.inline_send;
		c->st.inline_recv = c->lim.inline_recv;
		RPCRDMA_PROBE(v2_result, RPCRDMA_PROBE_CLIENT, c->lim.vers, c->lim.inline_send,
			      c->lim.inline_recv);
		if (c->bc)
			bc_clnt_lim(c->bc, &c->lim);
		if (c->v2_props)
			props_send(c);
	}
	return false;
}

bool clnt_v2_reply_vers(struct rpcrdma_clnt *c, struct clnt_slot *s, const struct rpcrdma1_hdr *h,
			int *rc)
{
	if (c->neg == CLNT_NEG_PROBE && probe_reply(c, s, h, *rc))
		return true;
	if (h->vers == c->rx_vers) {
		/* negotiation just ended with this reply; draft §5: an error
		 * does not report the credit limit */
		if (h->proc != RPCRDMA2_ERROR)
			xprt_credits_update(&c->cr, h->credit);
		return false;
	}
	/* A reply in another version than its call: only ERR_VERS reads the
	 * same in every version (RFC 8166 §4.5.1); its credit is not used. */
	if (!*rc && !(h->proc == RPCRDMA1_ERROR && h->err == RPCRDMA1_ERR_VERS))
		*rc = -EPROTO;
	return false;
}

void clnt_v2_probe_lost(struct rpcrdma_clnt *c, struct cb_list *cbl)
{
	if (c->vpolicy != RPCRDMA_VERSION_AUTO || c->state != C_UP)
		return;
	/* Draft §5.2: "the initial negotiation message is lost or dropped":
	 * no Version Two support assumed, from a fresh connection on (the
	 * lost probe's credit and any late answer go with the old one). */
	c->v2_off = true;
	c->st.v2_probe_losses++;
	RPCRDMA_PROBE(v2_result, RPCRDMA_PROBE_CLIENT, RPCRDMA1_VERSION, 0, 0);
	RLOG_PEER(RPCRDMA_LOG_INFO, "clnt", &c->addr,
		  "Version Two probe unanswered: Version One from now on");
	clnt_conn_lost(c, cbl); /* clnt_reconnect() closes it */
}

/* The client's rows get the client and the decoded header. */
struct clnt_opt_ctx {
	struct rpcrdma_clnt *c;
	const struct rpcrdma1_hdr *h;
};

/* The server's answer to our properties: the REPLY direction, the xid we
 * sent them with (*more: it ended that zombie call). Another one answers
 * nothing of ours. */
static uint32_t props_row(void *ctx, const struct xprt_opt_msg *m, bool *more)
{
	struct clnt_opt_ctx *x = ctx;
	struct rpcrdma_clnt *c = x->c;
	uint32_t idx = m->xid & XID_SLOT_MASK;
	struct clnt_slot *s = idx < c->nslots ? &c->slots[idx] : NULL;
	struct rpcrdma2_props p;

	if (!s || !s->in_use || !s->on_wire || !s->zombie || m->xid != c->props_xid) {
		c->st.unmatched_replies++;
		return 0;
	}
	/* A bad properties message: both sides keep the defaults. */
	if (!rpcrdma2_props_decode(m->optinfo, m->optinfo_len, &p)) {
		xprt_v2_props_apply(&c->lim, &p, c->inline_send, c->inline_recv, c->remote_inv);
		c->st.inline_send = c->lim.inline_send;
		c->st.inline_recv = c->lim.inline_recv;
		c->st.remote_invalidate = c->lim.remote_inv;
		if (c->bc)
			bc_clnt_lim(c->bc, &c->lim);
	} else {
		c->st.bad_headers++;
	}
	xprt_credits_update(&c->cr, x->h->credit);
	c->st.credits = c->cr.grant;
	s->on_wire = false;
	xprt_credits_done(&c->cr);
	c->st.outstanding = c->cr.on_wire;
	c->props_xid = 0;
	clnt_slot_free(c, s);
	*more = true;
	return 0;
}

static void clnt_opt_answer(void *ctx, const struct xprt_opt_msg *m, uint32_t err)
{
	struct clnt_opt_ctx *x = ctx;

	x->c->st.bad_headers++;
	answer(x->c, m->xid, err);
}

/* What a client takes (opt_dispatch.h): our properties' answer. Any other
 * opttype, or properties sent as a call, is answered ERR_INVAL_OPTION with
 * its xid, whatever its optdir (draft §3.1; pull completion is for a
 * responder that exposed a reply, which the requester never does). With a
 * backchannel, a call among them reached its reverse responder first
 * (bc_clnt_recv), which answered it on a reverse credit. */
static const struct xprt_opt_row clnt_rows[] = {
    {RPCRDMA2_OPTTYPE_PROPS, RPCRDMA2_REPLY, true, props_row},
};
static const struct xprt_opt_role clnt_role = {clnt_rows, 1, clnt_opt_answer, NULL};

/* An RDMA2_OPTIONAL: true when it ended a call on the wire. */
static bool optional_msg(struct rpcrdma_clnt *c, const uint8_t *buf, uint32_t len,
			 const struct rpcrdma1_hdr *h, const struct xprt_v2_info *vi)
{
	struct clnt_opt_ctx x = {c, h};
	const struct xprt_opt_msg m = {.xid = h->xid,
				       .optdir = vi->optdir,
				       .opttype = vi->opttype,
				       .optinfo = buf + vi->optinfo_off,
				       .optinfo_len = vi->optinfo_len,
				       .buf = buf,
				       .len = len,
				       .hdr_len = h->hdr_len};

	return xprt_opt_dispatch(&clnt_role, &x, &m);
}

int clnt_v2_decode(struct rpcrdma_clnt *c, const uint8_t *buf, uint32_t len, struct rpcrdma1_hdr *h)
{
	struct xprt_v2_info vi;
	int rc = xprt_v2_decode(buf, len, h, &vi);

	if (!rc && h->proc == RPCRDMA2_OPTIONAL)
		return optional_msg(c, buf, len, h, &vi) ? 1 : 2;
	if (!rc && h->proc == RPCRDMA2_ERROR)
		return 0;
	if (!rc && vi.dir == RPCRDMA2_REPLY && !xprt_v2_check_msg_dir(h, &vi, buf, len))
		return 0;
	/* RFC 8166 §4.5: a header in error is discarded. Its xid or credit
	 * value cannot be trusted, so it touches no call and no credit
	 * grant; the call it names waits on for its reply (or deadline).
	 * That includes a "reply" that does not travel in the REPLY
	 * direction (draft §4.2.2): a reverse call to a client without a
	 * backchannel, dropped as Version One drops one. */
	if (!rc && vi.dir == RPCRDMA2_CALL && !xprt_v2_check_msg_dir(h, &vi, buf, len))
		c->st.unexpected_calls++;
	else
		c->st.bad_headers++;
	return 2;
}
