// SPDX-License-Identifier: MIT
/*
 * rpcgen-generated server dispatchers over RPC-over-RDMA: each call gets an
 * SVCXPRT whose operations reach the request, so the generated
 * svc_getargs / svc_sendreply / svcerr_* / svc_freeargs calls work
 * unchanged.
 */
#include <rpc/rpc.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "rpcrdma/rpc.h"

struct tsvc {
	SVCXPRT x; /* first: the dispatcher only sees this */
	struct rpcrdma_svc_req *r;
	bool replied;
};

static struct tsvc *T(SVCXPRT *x)
{
	return (struct tsvc *)(void *)x;
}

static bool_t t_recv(SVCXPRT *x, struct rpc_msg *m)
{
	(void)x;
	(void)m;
	return FALSE;
}

static enum xprt_stat t_stat(SVCXPRT *x)
{
	(void)x;
	return XPRT_IDLE;
}

static bool_t t_getargs(SVCXPRT *x, xdrproc_t p, void *a)
{
	return rpcrdma_svc_getargs(T(x)->r, p, a) == 0;
}

static bool_t t_reply(SVCXPRT *x, struct rpc_msg *m)
{
	struct tsvc *t = T(x);
	struct rpcrdma_rpc_reply rep;
	xdrproc_t xres = NULL;
	void *res = NULL;

	if (t->replied)
		return FALSE;
	memset(&rep, 0, sizeof(rep));
	rep.xid = rpcrdma_svc_req_xid(t->r);
	rpcrdma_rpc_auth_none(&rep.verf);
	if (m->rm_reply.rp_stat == MSG_ACCEPTED) {
		rep.reply_stat = RPCRDMA_RPC_MSG_ACCEPTED;
		rep.accept_stat = (uint32_t)m->acpted_rply.ar_stat;
		if (m->acpted_rply.ar_stat == SUCCESS) {
			xres = m->acpted_rply.ar_results.proc;
			res = m->acpted_rply.ar_results.where;
		} else if (m->acpted_rply.ar_stat == PROG_MISMATCH) {
			rep.mismatch_low = (uint32_t)m->acpted_rply.ar_vers.low;
			rep.mismatch_high = (uint32_t)m->acpted_rply.ar_vers.high;
		}
	} else {
		rep.reply_stat = RPCRDMA_RPC_MSG_DENIED;
		rep.reject_stat = (uint32_t)m->rjcted_rply.rj_stat;
		if (m->rjcted_rply.rj_stat == RPC_MISMATCH) {
			rep.mismatch_low = (uint32_t)m->rjcted_rply.rj_vers.low;
			rep.mismatch_high = (uint32_t)m->rjcted_rply.rj_vers.high;
		} else {
			rep.auth_stat = (uint32_t)m->rjcted_rply.rj_why;
		}
	}
	t->replied = true;
	return svc_reply_raw(t->r, &rep, xres, res) == 0;
}

static bool_t t_freeargs(SVCXPRT *x, xdrproc_t p, void *a)
{
	(void)x;
	xdr_free(p, a);
	return TRUE;
}

static void t_destroy(SVCXPRT *x)
{
	(void)x;
}

static bool_t t_control(SVCXPRT *x, const u_int rq, void *in)
{
	(void)x;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops t_ops = {
    .xp_recv = t_recv,
    .xp_stat = t_stat,
    .xp_getargs = t_getargs,
    .xp_reply = t_reply,
    .xp_freeargs = t_freeargs,
    .xp_destroy = t_destroy,
};

static const struct xp_ops2 t_ops2 = {
    .xp_control = t_control,
};

void svc_tirpc_dispatch(struct rpcrdma_svc_req *r, rpcrdma_svc_tirpc_dispatch_t fn)
{
	struct tsvc t;
	struct svc_req rq;
	const struct rpcrdma_rpc_auth *cred = rpcrdma_svc_req_cred(r);

	memset(&t, 0, sizeof(t));
	memset(&rq, 0, sizeof(rq));
	t.r = r;
	t.x.xp_ops = (struct xp_ops *)(uintptr_t)&t_ops;
	t.x.xp_ops2 = (struct xp_ops2 *)(uintptr_t)&t_ops2;
	t.x.xp_verf.oa_flavor = AUTH_NONE;
	rq.rq_prog = rpcrdma_svc_req_prog(r);
	rq.rq_vers = rpcrdma_svc_req_vers(r);
	rq.rq_proc = rpcrdma_svc_req_proc(r);
	rq.rq_cred.oa_flavor = (enum_t)cred->flavor;
	rq.rq_cred.oa_base = (caddr_t)(uintptr_t)cred->body;
	rq.rq_cred.oa_length = cred->len;
	rq.rq_xprt = &t.x;
	fn(&rq, &t.x);
	/* A procedure may legitimately send no reply. */
	if (!t.replied)
		svc_req_drop(r);
}
