// SPDX-License-Identifier: MIT
/*
 * The duplicate request cache (drc.h) around a server call: looked up
 * before dispatch (svc_loop.c), given the reply when the call is answered
 * (reply.c), told when the call ends without one (svc_conn.c). A
 * duplicate parked while the first runs is answered here, on its own
 * connection, when the first's reply is made.
 */
#include "transport/responder.h"

/* No lock held: end @r without a reply; its receive goes back. */
static void req_drop(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc *s = r->conn->svc;

	futex_mutex_lock(&s->lock);
	svc_req_end(r, !r->conn->dead);
	futex_mutex_unlock(&s->lock);
}

/* No lock held: answer @r with the reply kept in @e. */
static void replay(struct rpcrdma_svc_req *r, struct svc_drc_entry *e)
{
	struct rpcrdma_rpc_reply rep;
	xdrproc_t xres;
	void *arg;

	svc_drc_reply_of(e, r->call.xid, &rep, &xres, &arg);
	(void)svc_reply_msg(r, &rep, xres, arg);
}

bool svc_drc_admit(struct rpcrdma_svc *s, struct rpcrdma_svc_req *r, const uint8_t *msg, size_t len)
{
	struct rpcrdma_svc_req *dropped;
	struct svc_drc_entry *e;
	struct svc_drc_key k;
	enum svc_drc_verdict v;

	svc_drc_key(&k, &r->conn->peer, r->call.xid, r->call.prog, r->call.vers, r->call.proc, msg,
		    len);
	v = svc_drc_lookup(s->drc, &k, r, &e, &dropped);
	if (dropped)
		req_drop(dropped); /* replaced by @r, a newer retransmission */
	switch (v) {
	case SVC_DRC_REPLAY:
		replay(r, e);
		svc_drc_put(s->drc, e);
		return true;
	case SVC_DRC_PARKED:
		return true;
	default:
		r->drc = e;
		return false;
	}
}

void svc_drc_req_done(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *rep,
		      xdrproc_t xres, void *res)
{
	struct svc_drc *d = r->conn->svc->drc;
	struct svc_drc_entry *e = r->drc;
	struct rpcrdma_svc_req *w = NULL;

	r->drc = NULL;
	if (svc_drc_done(d, e, rep, xres, res, &w)) {
		replay(w, e);
		svc_drc_put(d, e);
	} else if (w) {
		req_drop(w);
	}
}

void svc_drc_req_abandon(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_svc_req *w = NULL;

	svc_drc_abandon(r->conn->svc->drc, r->drc, &w);
	r->drc = NULL;
	if (w)
		svc_req_end(w, !w->conn->dead); /* lock held: svc_req_end's caller's */
}
